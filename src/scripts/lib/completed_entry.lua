-- The completed entry's fields (docs/protocol.md, "The event bus"): event completed, the id, the
-- attempt (the lease token), and the result when it is at most 1 KiB (1024 bytes).
local function completed_entry(id, token, result)
  local entry = { 'event', 'completed', 'id', id, 'attempt', token }
  if #result <= 1024 then
    entry[7] = 'result'
    entry[8] = result
  end
  return entry
end

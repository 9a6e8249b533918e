-- A flow parent: empty (none), or '<queue>' NUL '<id>': a queue name (1-255 bytes, no brace, no
-- control byte) and an id with the JOB prefix.
local function parented(s)
  if s == '' then return true end
  local at = string.find(s, '\0', 1, true)
  if at == nil or at == 1 or at > 256 then return false end
  local queue, pid = string.sub(s, 1, at - 1), string.sub(s, at + 1)
  return string.find(queue, '[%z\1-\31\127{}]') == nil and string.sub(pid, 1, 3) == 'JOB'
    and string.find(pid, '[%z\1-\31\127]') == nil
end

-- The trace grammar: '<version>-<trace-id>-<parent-id>-<flags>' (2, 32, 16, 2 lower-case hex
-- digits; version not ff, neither id all zeros), optionally ';' and 1+ printable ASCII bytes.
local function traced(s)
  if s == '' then return true end
  if #s > 512 then return false end
  local head, state = s, nil
  local semi = string.find(s, ';', 1, true)
  if semi then head, state = string.sub(s, 1, semi - 1), string.sub(s, semi + 1) end
  local v, t, p = string.match(head, '^([0-9a-f][0-9a-f])%-([0-9a-f]+)%-([0-9a-f]+)%-[0-9a-f][0-9a-f]$')
  if v == nil or v == 'ff' or #t ~= 32 or #p ~= 16 then return false end
  if t == string.rep('0', 32) or p == string.rep('0', 16) then return false end
  return state == nil or string.match(state, '^[ -~]+$') ~= nil
end

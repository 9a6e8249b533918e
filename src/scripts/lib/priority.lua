--- @include "integer"
-- A stored priority: an integer, else 0.
local function priority(p)
  if p and integer(p) then return p end
  return '0'
end

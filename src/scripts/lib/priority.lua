--- @include "count"
-- A stored priority: an integer (an optional `-` then a count, `-0` refused), else 0.
local function priority(p)
  if p and (count(p) or (string.sub(p, 1, 1) == '-' and positive(string.sub(p, 2)))) then return p end
  return '0'
end

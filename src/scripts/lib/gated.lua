--- @include "protocol/refuse"
--- @include "typed"
--- @include "wrongtype"
-- A refusal after the type gate on <active> (a sorted set or absent): WRONGTYPE first.
local function gated(active, text)
  if not typed({ active }, 'zset') then return wrongtype() end
  return refuse(text)
end

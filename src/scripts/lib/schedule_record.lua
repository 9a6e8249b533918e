--- @include "typed"
--- @include "wrongtype"
-- A paused schedule waits in repeats at this score (2^53 - 1, after every instant), so no schedule
-- loop finds it due; its record keeps paused = 1 (docs/protocol.md, "Schedules").
local PAUSED_SCORE = '9007199254740991'
-- The record of schedule <name> under <base>, or nil and the WRONGTYPE reply when repeats is not
-- a sorted set or the record not a hash (the type gate).
local function schedule_record(repeats, base, name)
  local record = base .. 'repeat:' .. name
  if not (typed({ repeats }, 'zset') and typed({ record }, 'hash')) then return nil, wrongtype() end
  return record
end

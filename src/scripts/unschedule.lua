#!lua flags=allow-oom
-- unschedule: removes a schedule (its record and its entry in repeats). Jobs it added stay.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.UNSCHEDULE 2 <repeats> <base> <name>
-- KEYS[1]  emq:{q}:repeats    the schedules (member = name, score = next due instant ms)
-- KEYS[2]  emq:{q}:           the queue's base; the record is <base>repeat:<name>
-- ARGV[1]  <name>             1-255 bytes, no control byte
-- Reply:   1 removed | 0 no such schedule
-- Errors:  shape, name, WRONGTYPE
--- @include "protocol/form"

--- @include "wrongtype"
--- @include "typed"

local repeats, name = KEYS[1], ARGV[1]
--- @include "protocol/checks"
local record = KEYS[2] .. 'repeat:' .. name
if not (typed({ repeats }, 'zset') and typed({ record }, 'hash')) then return wrongtype() end
local removed = redis.call('DEL', record) + redis.call('ZREM', repeats, name)
return removed > 0 and 1 or 0

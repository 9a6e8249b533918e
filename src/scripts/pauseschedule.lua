#!lua flags=allow-oom
-- pauseschedule: pauses a schedule. Its record keeps paused = 1 and its entry in repeats moves to
--                the paused score, so no schedule loop finds it due; FIRE misses a paused record.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.PAUSESCHEDULE 2 <repeats> <base> <name>
-- KEYS[1]  emq:{q}:repeats    the schedules (member = name, score = next due instant ms)
-- KEYS[2]  emq:{q}:           the queue's base; the record is <base>repeat:<name>
-- ARGV[1]  <name>             1-255 bytes, no control byte
-- Reply:   1 paused now | 2 already paused | 0 no such schedule (nothing written unless 1)
-- Errors:  shape, name, WRONGTYPE
--- @include "protocol/form"

--- @include "schedule_record"

local repeats, name = KEYS[1], ARGV[1]
--- @include "protocol/checks"
local record, refused = schedule_record(repeats, KEYS[2], name)
if not record then return refused end
if redis.call('EXISTS', record) == 0 then return 0 end
if redis.call('HGET', record, 'paused') == '1' then return 2 end
redis.call('HSET', record, 'paused', '1')
redis.call('ZADD', repeats, PAUSED_SCORE, name)
return 1

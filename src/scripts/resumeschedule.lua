#!lua flags=allow-oom
-- resumeschedule: resumes a paused schedule at the next instant the host computed from now (the
--                 instants that passed while it was paused are not fired), or ends it when none.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.RESUMESCHEDULE 2 <repeats> <base> <name> <next>
-- KEYS[1]  emq:{q}:repeats    the schedules (member = name, score = next due instant ms)
-- KEYS[2]  emq:{q}:           the queue's base; the record is <base>repeat:<name>
-- ARGV[1]  <name>             1-255 bytes, no control byte
-- ARGV[2]  <next>             non-negative integer ms: the first instant at or after now (0 = none)
-- Reply:   1 resumed | 3 resumed and ended | 2 not paused | 0 no such schedule (2, 0: nothing written)
-- Wake:    SPUBLISH emq:{q}:wake 0 when resumed (a due time changed: the schedule loops read again)
-- Errors:  shape, name, next, WRONGTYPE
--- @include "protocol/form"

--- @include "schedule_record"
--- @include "count"

local repeats, base, name, nxt = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
--- @include "protocol/checks"
local record, refused = schedule_record(repeats, base, name)
if not record then return refused end
if redis.call('EXISTS', record) == 0 then return 0 end
local r = redis.call('HMGET', record, 'paused', 'end_at')
if r[1] ~= '1' then return 2 end
local end_at = (r[2] and count(r[2])) and tonumber(r[2]) or 0
if nxt == '0' or (end_at ~= 0 and tonumber(nxt) > end_at) then
  redis.call('DEL', record)
  redis.call('ZREM', repeats, name)
  return 3
end
redis.call('HDEL', record, 'paused')
redis.call('HSET', record, 'next', nxt)
redis.call('ZADD', repeats, nxt, name)
redis.pcall('SPUBLISH', base .. 'wake', '0')
return 1

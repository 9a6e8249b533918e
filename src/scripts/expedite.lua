#!lua flags=allow-oom
-- expedite: a scheduled job runs now (an operator's promote of one job): schedule -> pending.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.EXPEDITE 3 <schedule> <pending> <base> <id>
-- KEYS[1]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- Reply:   1
-- Event:   promoted (id, attempt: the row's) on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 1
-- Errors:  shape, JOB prefix, WRONGTYPE, job not found, job is not scheduled (docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "count"
--- @include "typed"
--- @include "priority"
--- @include "bus"

local schedule, pending, base, id = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if not typed({ schedule, pending }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
local got = redis.call('HMGET', row, 'state', 'priority', 'attempts')
if got[1] ~= 'scheduled' or not redis.call('ZSCORE', schedule, id) then
  return refuse('job is not scheduled')
end

redis.call('ZREM', schedule, id)
redis.call('HSET', row, 'state', 'pending')
redis.call('ZADD', pending, priority(got[2]), id)
bus(base)('event', 'promoted', 'id', id, 'attempt', (got[3] and count(got[3])) and got[3] or '0')
redis.pcall('SPUBLISH', base .. 'wake', '1')
return 1

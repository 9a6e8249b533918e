#!lua flags=allow-oom
-- remove: delete a job that is not active, from whichever set its state names.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.REMOVE 5 <pending> <schedule> <done> <dead> <base> <id>
-- KEYS[1]  emq:{q}:pending    the ready set
-- KEYS[2]  emq:{q}:schedule   the delayed set
-- KEYS[3]  emq:{q}:done       the completed set
-- KEYS[4]  emq:{q}:dead       the exhausted set
-- KEYS[5]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- Reply:   1 removed | 0 no such job (nothing written). An id without a row (an orphan) is
--          removed from the sets that hold it (not active): 1 if any held it, else 0.
-- Event:   removed (id, attempt: the row's) on emq:{q}:events when a row was deleted
-- Errors:  shape, JOB prefix, WRONGTYPE (sets, or a row that is not a hash), job is active
--          (see docs/protocol.md)
--- @include "protocol/form"

local wrongtype = 'WRONGTYPE Operation against a key holding the wrong kind of value'
--- @include "count"
--- @include "typed"
--- @include "bus"

local id = ARGV[1]
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.REMOVE id must start with JOB') end
if not typed({ KEYS[1], KEYS[2], KEYS[3], KEYS[4] }, 'zset') then return redis.error_reply(wrongtype) end
local row = KEYS[5] .. 'job:' .. id
local rtype = redis.call('TYPE', row).ok
if rtype == 'none' then
  local held = 0
  for i = 1, 4 do held = held + redis.call('ZREM', KEYS[i], id) end
  return held > 0 and 1 or 0
end
if rtype ~= 'hash' then return redis.error_reply(wrongtype) end
local fields = redis.call('HMGET', row, 'state', 'attempts')
local state, attempts = fields[1], fields[2]
if state == 'active' then return redis.error_reply('ERR EMQ.REMOVE job is active') end

-- A flow's waiting parent leaves <base>waiting (derived from the base, type-gated here).
local waiting = KEYS[5] .. 'waiting'
if state == 'waiting' and not typed({ waiting }, 'zset') then return redis.error_reply(wrongtype) end
local set = ({ pending = KEYS[1], scheduled = KEYS[2], completed = KEYS[3], dead = KEYS[4], waiting = waiting })[state or '']
if set then redis.call('ZREM', set, id) end
redis.call('DEL', row)
bus(KEYS[5])('event', 'removed', 'id', id, 'attempt', (attempts and count(attempts)) and attempts or '0')
return 1

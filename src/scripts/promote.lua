#!lua flags=allow-oom
-- promote: move due ids from schedule to pending, at most <limit> per call, oldest first.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>
-- KEYS[1]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <limit>            integer from 1 to 10000
-- Reply:   the number of ids moved to pending
-- Picks:   ZRANGE <schedule> -inf <now> BYSCORE LIMIT 0 <limit> (ties by id). A picked id whose
--          row is not a hash (an orphan) or that is not a JOB id is only removed, not counted.
-- Events:  the age trim of emq:{q}:events (XTRIM MINID ~ now - maxage), once, then promoted (id,
--          attempt: the row's) per id moved
-- Wake:    SPUBLISH emq:{q}:wake <count> after the writes when the count > 0
-- Errors:  shape, limit, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "wrongtype"
--- @include "count"
--- @include "typed"
--- @include "priority"
--- @include "aged_bus"

local schedule, pending, base, limit = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
--- @include "protocol/checks"
if not typed({ schedule, pending }, 'zset') then return wrongtype() end

local now = now_ms()
local due = redis.call('ZRANGE', schedule, '-inf', string.format('%d', now), 'BYSCORE', 'LIMIT', 0, limit)
local emit = aged_bus(base, now)
local moved = 0
for _, id in ipairs(due) do
  redis.call('ZREM', schedule, id)
  local row = base .. 'job:' .. id
  if string.sub(id, 1, 3) == 'JOB' and redis.call('TYPE', row).ok == 'hash' then
    local got = redis.call('HMGET', row, 'priority', 'attempts')
    redis.call('HSET', row, 'state', 'pending')
    redis.call('ZADD', pending, priority(got[1]), id)
    emit('event', 'promoted', 'id', id, 'attempt', (got[2] and count(got[2])) and got[2] or '0')
    moved = moved + 1
  end
end
if moved > 0 then redis.pcall('SPUBLISH', base .. 'wake', string.format('%d', moved)) end
return moved

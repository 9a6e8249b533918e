#!lua flags=allow-oom
-- cancel: a job that has not finished — pending, scheduled or active — is dead at once with the
--          error 'cancelled' (the row's cancelled field: the attempt it ended), no retry; a
--          finished job is left.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.CANCEL 5 <pending> <active> <schedule> <dead> <base> <id>
-- KEYS[1]  emq:{q}:pending    the ready set
-- KEYS[2]  emq:{q}:active     the leased set
-- KEYS[3]  emq:{q}:schedule   the delayed set
-- KEYS[4]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[5]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- Reply:   the state before the call (bulk string): pending | scheduled | active (cancelled);
--          completed | dead | waiting | any other text | '' (no state): nothing written
-- Active:  no lease gate: the holder's next EXTEND / COMPLETE / FAIL meets 'job is not active';
--          its group slot is released as FAIL releases it (a parked id back in pending, the wake)
-- Events:  failed then dead (id, attempt: the row's, reason: cancelled) on emq:{q}:events
-- Outbox:  a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id> NUL
--          failed NUL cancelled
-- Errors:  shape, JOB prefix, WRONGTYPE (the sets, <base>outbox), job not found (see
--          docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "count"
--- @include "typed"
--- @include "bus"
--- @include "release"

local pending, active, schedule, dead, base, id = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1]
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
local outbox = base .. 'outbox'
if not typed({ pending, active, schedule, dead, outbox }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
local f = redis.call('HMGET', row, 'state', 'attempts', 'group', 'parent')
local state, group = f[1] or '', f[3] or ''
local home = ({ pending = pending, scheduled = schedule, active = active })[state]
if not home then return state end

local now = now_ms()
redis.call('ZREM', home, id)
local emit, limited = bus(base)
if state == 'active' then
  release(base, group ~= '' and { group } or {}, 1, limited)
elseif state == 'pending' and group ~= '' then
  -- Parked by flow control: the id waits in <base>group:<group> (a key of another type holds none).
  local parked = base .. 'group:' .. group
  if redis.pcall('ZREM', parked, id) == 1 and redis.call('EXISTS', parked) == 0 then
    redis.pcall('ZREM', base .. 'parked', group)
  end
end
local attempt = (f[2] and count(f[2])) and f[2] or '0'
emit('event', 'failed', 'id', id, 'attempt', attempt, 'reason', 'cancelled')
emit('event', 'dead', 'id', id, 'attempt', attempt, 'reason', 'cancelled')
if f[4] and f[4] ~= '' then
  redis.call('ZADD', outbox, string.format('%d', now), f[4] .. '\0' .. id .. '\0failed\0cancelled')
end
redis.call('HSET', row, 'state', 'dead', 'error', 'cancelled', 'cancelled', attempt)
redis.call('ZADD', dead, string.format('%d', now), id)
return state

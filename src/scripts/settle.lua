#!lua flags=allow-oom
-- settle: a flow's child has settled; its outcome is recorded on its waiting parent, once per
--         child. The last child readies the parent; a failed child kills it unless it ignores them.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.SETTLE 4 <waiting> <pending> <dead> <base> <id> <child_queue> <child_id> <outcome> <value>
-- KEYS[1]  emq:{q}:waiting    the parents waiting for children
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[4]  emq:{q}:           the parent queue's base; the row is <base>job:<id>, the outbox <base>outbox
-- ARGV[1]  <id>               the parent's id (gated on its JOB prefix)
-- ARGV[2]  <child_queue>      the child's queue: 1-255 bytes, no '{', '}' or control byte
-- ARGV[3]  <child_id>         the child's id (gated on its JOB prefix)
-- ARGV[4]  <outcome>          'completed' or 'failed'
-- ARGV[5]  <value>            the child's result or error: any bytes, at most 8 MiB (8388608 bytes)
-- Field:   child:<child_queue>:<child_id> (completed) or failed:<child_queue>:<child_id> (failed),
--          = <value>; either present: duplicate. A failed child counts as settled under 'ignore'.
-- Reply:   'waiting' | 'ready' | 'dead' | 'duplicate' | 'late' | 'gone' (bulk string)
-- Outbox:  a parent killed by its child that has a parent of its own: ZADD <base>outbox <now>
--          <parent> NUL <id> NUL failed NUL <its error>
-- Events:  ready (id, attempt) when the parent became ready; dead (id, attempt, reason: the
--          error's first 200 bytes) when a failed child killed it; on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes when the parent became ready
-- Errors:  shape, JOB prefix, child queue, child id, outcome, value, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "positive"
--- @include "count"
--- @include "typed"
--- @include "queue"
--- @include "bus"

local waiting, pending, dead, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, cq, cid, outcome, value = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if not queue(cq) then return refuse('child queue must be a queue name') end
if string.sub(cid, 1, 3) ~= 'JOB' then return refuse('child id must start with JOB') end
if outcome ~= 'completed' and outcome ~= 'failed' then return refuse('outcome must be completed or failed') end
--- @include "protocol/checks"
local outbox = base .. 'outbox'
if not typed({ waiting, pending, dead, outbox }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return 'gone' end
local child = cq .. ':' .. cid
local f = redis.call('HMGET', row, 'state', 'children', 'priority', 'on_failure', 'parent',
  'child:' .. child, 'failed:' .. child, 'attempts')
local attempt = (f[8] and count(f[8])) and f[8] or '0'
if f[6] or f[7] then return 'duplicate' end
local ignore = f[4] == 'ignore'
local field = outcome == 'completed' and ('child:' .. child) or ('failed:' .. child)
if f[1] ~= 'waiting' then
  redis.call('HSET', row, field, value)
  return 'late'
end

if outcome == 'completed' or ignore then
  local left = ((f[2] and count(f[2])) and tonumber(f[2]) or 1) - 1
  if left > 0 then
    redis.call('HSET', row, field, value, 'children', string.format('%d', left))
    return 'waiting'
  end
  local p = f[3]
  local score = (p and (count(p) or (string.sub(p, 1, 1) == '-' and positive(string.sub(p, 2))))) and p or '0'
  redis.call('HSET', row, field, value, 'children', '0', 'state', 'pending')
  redis.call('ZREM', waiting, id)
  redis.call('ZADD', pending, score, id)
  bus(base)('event', 'ready', 'id', id, 'attempt', attempt)
  redis.pcall('SPUBLISH', base .. 'wake', '1')
  return 'ready'
end

local now = string.format('%d', now_ms())
local err = 'child ' .. child .. ' failed: ' .. value
redis.call('HSET', row, field, value, 'state', 'dead', 'error', err)
redis.call('ZREM', waiting, id)
redis.call('ZADD', dead, now, id)
bus(base)('event', 'dead', 'id', id, 'attempt', attempt, 'reason', string.sub(err, 1, 200))
if f[5] and f[5] ~= '' then
  redis.call('ZADD', outbox, now, f[5] .. '\0' .. id .. '\0failed\0' .. err)
end
return 'dead'

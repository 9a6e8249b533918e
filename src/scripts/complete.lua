#!lua flags=allow-oom
-- complete: an active job finished; keep its row in done (with retention) or delete it.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:done       the completed set (score = finish time ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <result>           any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[4]  <keep>             non-negative integer: done keeps at most this many ids (0 = delete the row)
-- Reply:   1
-- Event:   completed (id, attempt) on emq:{q}:events
-- Flow:    the job's group slot is released (below)
-- Outbox:  a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id> NUL
--          completed NUL <result>, with the completion (docs/protocol.md, "Flows")
-- Retention: while done holds more than keep, the oldest are removed with their rows, at most 10 per call.
-- Errors:  shape, lease token, result, keep, JOB prefix, WRONGTYPE, job not found, job is not active,
--          stale lease token (see docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "typed"
--- @include "wrongtype"
--- @include "gated"
--- @include "retain"
--- @include "bus"
--- @include "release"

local active, done, base = KEYS[1], KEYS[2], KEYS[3]
local id, token, result, keep = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
local outbox = base .. 'outbox'
if not typed({ done }, 'zset') then return wrongtype() end
-- The type gate on active runs where it decides something: before any later refusal; on the
-- success path ZREM (the first write) is the gate, and its count is the membership gate.
local row = base .. 'job:' .. id
local fields = redis.pcall('HMGET', row, 'state', 'attempts', 'parent', 'group')
if fields.err or (fields[1] ~= 'active' and redis.call('TYPE', row).ok ~= 'hash') then
  return gated(active, 'job not found')
end
if fields[1] ~= 'active' then return gated(active, 'job is not active') end
if fields[2] ~= token then
  if not typed({ active }, 'zset') then return wrongtype() end
  if not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
  return refuse('stale lease token')
end
-- A flow's child (a row with a parent) writes its outbox: its type gate, before any write.
local child = fields[3] and fields[3] ~= ''
if child and not typed({ outbox }, 'zset') then return wrongtype() end

local left = redis.pcall('ZREM', active, id)
if type(left) == 'table' then return left end
if left == 0 then return refuse('job is not active') end
local emit, limited = bus(base)
release(base, (fields[4] and fields[4] ~= '') and { fields[4] } or {}, 1, limited)
emit('event', 'completed', 'id', id, 'attempt', token)
if keep == '0' and not child then
  redis.call('DEL', row)
  return 1
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if child then
  redis.call('ZADD', outbox, string.format('%d', now), fields[3] .. '\0' .. id .. '\0completed\0' .. result)
end
if keep == '0' then
  redis.call('DEL', row)
  return 1
end
redis.call('HSET', row, 'state', 'completed', 'result', result)
redis.call('ZADD', done, string.format('%d', now), id)
retain(done, base, tonumber(keep))
return 1

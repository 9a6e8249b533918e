#!lua flags=allow-oom
-- fail: an active attempt failed; the job goes back to pending, waits in schedule, or is dead.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[4]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[5]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <error>            any bytes, at most 16 KiB (16384), stored in the row's error field
-- ARGV[4]  <backoff>          non-negative integer ms (0 = pending now)
-- ARGV[5]  <max_attempts>     positive integer; the row's max_attempts field wins
-- ARGV[6]  <keep>             non-negative integer: dead keeps at most this many ids (0 = delete the row)
-- Reply:   the new state: 'pending' | 'scheduled' | 'dead' (bulk string)
-- Dead when attempts >= max_attempts. Retention (dead path): at most 10 oldest removed per call.
-- Events:  failed (id, attempt, reason: the error's first 200 bytes), then dead (id, attempt,
--          reason) or retrying (id, attempt, delay), on emq:{q}:events
-- Outbox:  dead, a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id>
--          NUL failed NUL <error>, with the move (docs/protocol.md, "Flows")
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes when the id entered pending, 0 when it entered
--          schedule (backoff > 0)
-- Errors:  shape, lease token, error, backoff, max attempts, keep, JOB prefix, WRONGTYPE, job not found,
--          job is not active, stale lease token (see docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "positive"
--- @include "typed"
--- @include "leased"
--- @include "row_priority"
--- @include "retain"
--- @include "bus"
--- @include "release"

local active, pending, schedule, dead, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, token, err, backoff, max, keep = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
local outbox = base .. 'outbox'
if not typed({ active, pending, schedule, dead, outbox }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
local refused = leased(active, row, id, token)
if refused then return refused end

local own = redis.call('HGET', row, 'max_attempts')
if own and positive(own) then max = own end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local group = redis.call('HGET', row, 'group')
redis.call('ZREM', active, id)
local emit, limited = bus(base)
release(base, (group and group ~= '') and { group } or {}, 1, limited)
local reason = string.sub(err, 1, 200)
emit('event', 'failed', 'id', id, 'attempt', token, 'reason', reason)
if tonumber(token) >= tonumber(max) then
  emit('event', 'dead', 'id', id, 'attempt', token, 'reason', reason)
  local parent = redis.call('HGET', row, 'parent')
  if parent and parent ~= '' then
    redis.call('ZADD', outbox, string.format('%d', now), parent .. '\0' .. id .. '\0failed\0' .. err)
  end
  if keep == '0' then
    redis.call('DEL', row)
  else
    redis.call('HSET', row, 'state', 'dead', 'error', err)
    redis.call('ZADD', dead, string.format('%d', now), id)
    retain(dead, base, tonumber(keep))
  end
  return 'dead'
end
emit('event', 'retrying', 'id', id, 'attempt', token, 'delay', backoff)
if backoff == '0' then
  local score = row_priority(row)
  redis.call('HSET', row, 'state', 'pending', 'error', err)
  redis.call('ZADD', pending, score, id)
  redis.pcall('SPUBLISH', base .. 'wake', '1')
  return 'pending'
end
redis.call('HSET', row, 'state', 'scheduled', 'error', err)
redis.call('ZADD', schedule, string.format('%d', now + tonumber(backoff)), id)
redis.pcall('SPUBLISH', base .. 'wake', '0')
return 'scheduled'

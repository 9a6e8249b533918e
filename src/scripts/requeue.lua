#!lua flags=allow-oom
-- requeue: an active job goes back to pending now without consuming its attempt.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <max_attempts>     positive integer; the row's max_attempts field wins
-- Reply:   1
-- Writes:  the row's max_attempts becomes M + 1 (M: the row's own when a positive integer, else
--          the given one): attempts never decreases (it is the lease token), so the limit rises
--          by the attempt handed back.
-- Event:   requeued (id, attempt) on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes (one id entered pending)
-- Errors:  shape, lease token, max attempts, JOB prefix, WRONGTYPE, job not found, job is not
--          active, stale lease token (see docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "positive"
--- @include "count"
--- @include "typed"
--- @include "bus"
--- @include "release"

local active, pending, base = KEYS[1], KEYS[2], KEYS[3]
local id, token, max = ARGV[1], ARGV[2], ARGV[3]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if not typed({ active, pending }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
local fields = redis.call('HMGET', row, 'state', 'attempts', 'priority', 'max_attempts', 'group')
if fields[1] ~= 'active' or not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
if fields[2] ~= token then return refuse('stale lease token') end

local priority = fields[3]
if not (priority and (count(priority) or (string.sub(priority, 1, 1) == '-' and positive(string.sub(priority, 2))))) then
  priority = '0'
end
local own = fields[4]
if own and positive(own) then max = own end
redis.call('ZREM', active, id)
local emit, limited = bus(base)
release(base, (fields[5] and fields[5] ~= '') and { fields[5] } or {}, 1, limited)
redis.call('HSET', row, 'state', 'pending', 'max_attempts', string.format('%d', tonumber(max) + 1))
redis.call('ZADD', pending, priority, id)
emit('event', 'requeued', 'id', id, 'attempt', token)
redis.pcall('SPUBLISH', base .. 'wake', '1')
return 1

#!lua
-- retry: a dead job gets extra attempts on top of those it used and goes back to pending.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.RETRY 3 <dead> <pending> <base> <id> <extra_attempts>
-- KEYS[1]  emq:{q}:dead       the exhausted set
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <extra_attempts>   positive integer
-- Reply:   1
-- Writes:  the row's max_attempts becomes attempts + extra (attempts never decreases)
-- Event:   retrying (id, attempt: the row's attempts, delay 0) on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes (one id entered pending)
-- Errors:  shape, extra attempts, JOB prefix, WRONGTYPE, job not found, job is not dead
--          (see docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "count"
--- @include "typed"
--- @include "row_priority"
--- @include "bus"

local dead, pending, base, id, extra = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if not typed({ dead, pending }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
if redis.call('HGET', row, 'state') ~= 'dead' or not redis.call('ZSCORE', dead, id) then
  return refuse('job is not dead')
end

local attempts = redis.call('HGET', row, 'attempts')
attempts = (attempts and count(attempts)) and tonumber(attempts) or 0
local score = row_priority(row)
redis.call('ZREM', dead, id)
redis.call('HSET', row, 'state', 'pending', 'max_attempts', string.format('%d', attempts + tonumber(extra)))
redis.call('ZADD', pending, score, id)
bus(base)('event', 'retrying', 'id', id, 'attempt', string.format('%d', attempts), 'delay', '0')
redis.pcall('SPUBLISH', base .. 'wake', '1')
return 1

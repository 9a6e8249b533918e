#!lua flags=allow-oom
-- reschedule: an active job hands itself back to schedule (a snooze: job.moveToDelayed).
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.RESCHEDULE 3 <active> <schedule> <base> <id> <token> <delay>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <delay>            non-negative integer ms from now
-- Reply:   the due time (integer ms)
-- Writes:  state scheduled, the id in schedule at now + delay; attempts unchanged (the snoozed
--          attempt counts toward max attempts); no error written; the group slot released.
-- Event:   delayed (id, attempt, delay) on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 0 after the writes (an id entered schedule)
-- Errors:  shape, lease token, delay, JOB prefix, WRONGTYPE, job not found, job is not active,
--          stale lease token (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "typed"
--- @include "leased"
--- @include "bus"
--- @include "release"

local active, schedule, base = KEYS[1], KEYS[2], KEYS[3]
local id, token, delay = ARGV[1], ARGV[2], ARGV[3]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if not typed({ active, schedule }, 'zset') then return wrongtype() end
local row = base .. 'job:' .. id
local refused = leased(active, row, id, token)
if refused then return refused end

local group = redis.call('HGET', row, 'group')
local now = now_ms()
local due = now + tonumber(delay)
redis.call('ZREM', active, id)
local emit, limited = bus(base)
release(base, (group and group ~= '') and { group } or {}, 1, limited)
redis.call('HSET', row, 'state', 'scheduled')
redis.call('ZADD', schedule, string.format('%d', due), id)
emit('event', 'delayed', 'id', id, 'attempt', token, 'delay', delay)
redis.pcall('SPUBLISH', base .. 'wake', '0')
return due

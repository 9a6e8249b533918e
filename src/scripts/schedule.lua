#!lua
-- schedule: creates or replaces a schedule's record (what its jobs carry, when it fires next, how
--           it ends) and its entry in repeats. The server computes no instant: the host does.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.SCHEDULE 2 <repeats> <base> <name> <spec> <next> <limit> <end_at> <payload> <priority> <max_attempts> <timeout> <job_name> <backoff>
-- KEYS[1]  emq:{q}:repeats    the schedules (member = name, score = next due instant ms)
-- KEYS[2]  emq:{q}:           the queue's base; the record is <base>repeat:<name>
-- ARGV[1]  <name>             1-255 bytes, no control byte
-- ARGV[2]  <spec>             any bytes: the host's description of the instants
-- ARGV[3]  <next>             positive integer ms: the first due instant
-- ARGV[4]  <limit>            non-negative integer: jobs added at most (0 = no limit)
-- ARGV[5]  <end_at>           non-negative integer ms: no instant after it (0 = none)
-- ARGV[6]  <payload>          any bytes, at most 8 MiB (8388608 bytes): the jobs' payload
-- ARGV[7]  <priority>         an integer: the jobs' priority
-- ARGV[8]  <max_attempts>     non-negative integer (0 = the worker decides)
-- ARGV[9]  <timeout>          non-negative integer ms (0 = none)
-- ARGV[10] <job_name>         empty (none), or a label: the jobs' name (their row's name)
-- ARGV[11] <backoff>          empty (none), or a label: the jobs' own backoff (their row's backoff)
-- Reply:   1 created | 2 replaced (next reset, fired kept) | 0 unchanged (nothing written: the nine
--          described fields equal; a job_name or backoff an older record lacks reads as empty); a
--          paused schedule replaced stays paused (its entry stays at the paused score)
-- Wake:    SPUBLISH emq:{q}:wake 0 when created or replaced (a due time changed: the workers'
--          schedule loops read repeats again)
-- Errors:  shape, name, next, limit, end at, payload, priority, max attempts, timeout, job name,
--          backoff, WRONGTYPE
--- @include "protocol/form"

--- @include "schedule_record"
--- @include "unchanged"

local repeats, base = KEYS[1], KEYS[2]
local name, spec, nxt, limit, end_at = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local payload, priority, max, timeout, job_name, backoff = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
--- @include "protocol/checks"
local record, refused = schedule_record(repeats, base, name)
if not record then return refused end

local given = { spec, payload, priority, max, timeout, limit, end_at, job_name, backoff }
local existed = redis.call('EXISTS', record) == 1
if existed and unchanged(redis.call('HMGET', record, unpack(DESCRIBED)), given) then return 0 end
local described = {}
for i, field in ipairs(DESCRIBED) do
  table.insert(described, field)
  table.insert(described, given[i])
end
table.insert(described, 'next')
table.insert(described, nxt)
if not existed then
  table.insert(described, 'fired')
  table.insert(described, '0')
end
local paused = existed and redis.call('HGET', record, 'paused') == '1'
redis.call('HSET', record, unpack(described))
redis.call('ZADD', repeats, paused and PAUSED_SCORE or nxt, name)
redis.pcall('SPUBLISH', base .. 'wake', '0')
return existed and 2 or 1

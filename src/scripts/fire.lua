#!lua
-- fire: adds a schedule's job for one instant, compare-and-set on the schedule's next instant, and
--       moves the schedule on (or ends it). The host computes the instants; the id is derived from
--       the schedule and the instant, so a second fire of one instant is a duplicate.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.FIRE 5 <row> <pending> <schedule> <repeats> <base> <id> <name> <expected> <instant> <next>
-- KEYS[1]  emq:{q}:job:<id>   the job row of the instant
-- KEYS[2]  emq:{q}:pending    the ready set (score = priority)
-- KEYS[3]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[4]  emq:{q}:repeats    the schedules (member = name, score = next due instant ms)
-- KEYS[5]  emq:{q}:           the queue's base; the record is <base>repeat:<name>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <name>             1-255 bytes, no control byte
-- ARGV[3]  <expected>         positive integer ms: the record's next instant as the caller read it
-- ARGV[4]  <instant>          non-negative integer ms: the instant whose job is added (0 = none)
-- ARGV[5]  <next>             non-negative integer ms: the instant after it (0 = none: ends)
-- Reply:   0 miss (no record, next is not <expected>, or paused; nothing written) | 1 added, goes on |
--          2 added, ended | 3 no job (skipped, or the row exists), goes on | 4 no job, ended
-- Event:   added (id, attempt 0) when due; delayed (id, attempt 0, delay) when the instant is ahead
-- Wake:    SPUBLISH emq:{q}:wake 1 (added ready) or 0 (added for later)
-- Row:     the record's payload, priority, max_attempts, timeout, and its job_name as name and
--          backoff as backoff (each when set; a stored value outside its grammar reads as unset)
-- Record:  goes on: next <next>, fired <n>, and last_fired <instant> when a job was added
-- Errors:  shape, name, expected, instant, next, JOB prefix, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "wrongtype"
--- @include "count"
--- @include "typed"
--- @include "priority"
--- @include "label"
--- @include "unless"
--- @include "bus"
-- A stored number read by its grammar; anything else reads as 0.
local function stored(s) if s and count(s) then return tonumber(s) end return 0 end
-- A stored label read by its grammar; anything else (or absent) reads as empty.
local function text(s) if s and label(s) then return s end return '' end

local row, pending, schedule, repeats, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, name, expected, instant, nxt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.FIRE id must start with JOB') end
local record = base .. 'repeat:' .. name
if not (typed({ pending, schedule, repeats }, 'zset') and typed({ record }, 'hash')) then return wrongtype() end
local r = redis.call('HMGET', record, 'next', 'fired', 'limit', 'end_at', 'payload', 'priority', 'max_attempts', 'timeout', 'paused',
  'job_name', 'backoff')
if r[1] ~= expected or r[9] == '1' then return 0 end

local fired, limit, end_at = stored(r[2]), stored(r[3]), stored(r[4])
local at, after = tonumber(instant), tonumber(nxt)
local function ended(added)
  redis.call('DEL', record)
  redis.call('ZREM', repeats, name)
  return added and 2 or 4
end
if (limit ~= 0 and fired >= limit) or (at ~= 0 and end_at ~= 0 and at > end_at) then return ended(false) end

local added = false
if at ~= 0 and redis.call('EXISTS', row) == 0 then
  local now = now_ms()
  local score, max, timeout = priority(r[6]), stored(r[7]), stored(r[8])
  local fields = { 'state', at <= now and 'pending' or 'scheduled', 'attempts', '0', 'payload', r[5] or '' }
  if score ~= '0' then
    table.insert(fields, 'priority')
    table.insert(fields, score)
  end
  if max ~= 0 then
    table.insert(fields, 'max_attempts')
    table.insert(fields, string.format('%d', max))
  end
  if timeout ~= 0 then
    table.insert(fields, 'timeout')
    table.insert(fields, string.format('%d', timeout))
  end
  unless(fields, 'name', text(r[10]), '')
  unless(fields, 'backoff', text(r[11]), '')
  redis.call('HSET', row, unpack(fields))
  if at <= now then
    redis.call('ZADD', pending, score, id)
    bus(base)('event', 'added', 'id', id, 'attempt', '0')
    redis.pcall('SPUBLISH', base .. 'wake', '1')
  else
    redis.call('ZADD', schedule, instant, id)
    bus(base)('event', 'delayed', 'id', id, 'attempt', '0', 'delay', string.format('%d', at - now))
    redis.pcall('SPUBLISH', base .. 'wake', '0')
  end
  fired = fired + 1
  added = true
end

if after == 0 or (end_at ~= 0 and after > end_at) or (limit ~= 0 and fired >= limit) then return ended(added) end
if added then
  redis.call('HSET', record, 'next', nxt, 'fired', string.format('%d', fired), 'last_fired', instant)
else
  redis.call('HSET', record, 'next', nxt, 'fired', string.format('%d', fired))
end
redis.call('ZADD', repeats, nxt, name)
return added and 1 or 3

#!lua flags=allow-oom
-- clean: delete finished jobs (completed or dead) older than a grace period, at most <limit>
--          per call, the oldest first.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.CLEAN 3 <done> <dead> <base> <state> <grace_ms> <limit>
-- KEYS[1]  emq:{q}:done       the completed set (score = finish time ms)
-- KEYS[2]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[3]  emq:{q}:           the queue's base; a row is <base>job:<id>
-- ARGV[1]  <state>            completed (the set done) or dead (the set dead)
-- ARGV[2]  <grace_ms>         only ids whose score is at most now - grace (0: all)
-- ARGV[3]  <limit>            integer from 1 to 10000
-- Reply:   the number of ids deleted
-- Picks:   ZRANGE <set> -inf <now - grace> BYSCORE LIMIT 0 <limit> (ties by id)
-- Event:   cleaned (state, count) on emq:{q}:events when the count > 0
-- Errors:  shape, state, grace, limit, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "typed"
--- @include "bus"

local done, dead, base = KEYS[1], KEYS[2], KEYS[3]
local state, grace, limit = ARGV[1], ARGV[2], ARGV[3]
local set = ({ completed = done, dead = dead })[state]
if not set then return refuse('state must be completed or dead') end
--- @include "protocol/checks"
if not typed({ done, dead }, 'zset') then return wrongtype() end

local now = now_ms()
local upto = string.format('%d', now - tonumber(grace))
local ids = redis.call('ZRANGE', set, '-inf', upto, 'BYSCORE', 'LIMIT', 0, limit)
if #ids == 0 then return 0 end
for _, id in ipairs(ids) do
  redis.call('ZREM', set, id)
  redis.call('DEL', base .. 'job:' .. id)
end
bus(base)('event', 'cleaned', 'state', state, 'count', string.format('%d', #ids))
return #ids

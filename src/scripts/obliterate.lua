#!lua flags=allow-oom
-- obliterate: delete a queue — every job of its five sets and of <base>waiting (a flow's parents),
--          at most <limit> per call; the call that leaves the sets empty also deletes its meta,
--          its events stream, its flow-outbox and its flow control (limits, windows, groups'
--          counts, parked ids with their rows).
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.OBLITERATE 6 <pending> <active> <schedule> <done> <dead> <base> <force> <limit>
-- KEYS[1-5] emq:{q}:pending, active, schedule, done, dead
-- KEYS[6]  emq:{q}:           the queue's base; rows <base>job:<id>, <base>meta, <base>events,
--                             <base>waiting, <base>outbox
-- ARGV[1]  <force>            1: active jobs too; 0: refused while any job is active
-- ARGV[2]  <limit>            integer from 1 to 10000
-- Reply:   [<deleted>, <left>]: ids deleted by this call, ids the sets still hold (0: gone)
-- Event:   none (the stream is deleted with the queue)
-- Errors:  shape, force, limit, WRONGTYPE, queue has active jobs (see docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "typed"

local base, force, limit = KEYS[6], ARGV[1], ARGV[2]
local sets = { KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], base .. 'waiting' }
if force ~= '0' and force ~= '1' then return refuse('force must be 0 or 1') end
--- @include "protocol/checks"
if not typed(sets, 'zset') then return wrongtype() end
if force == '0' and redis.call('ZCARD', KEYS[2]) > 0 then return refuse('queue has active jobs') end

local room, picks = tonumber(limit), {}
for i, set in ipairs(sets) do
  picks[i] = room > 0 and redis.call('ZRANGE', set, 0, room - 1) or {}
  room = room - #picks[i]
end
local deleted, left = 0, 0
for i, set in ipairs(sets) do
  for _, id in ipairs(picks[i]) do
    redis.call('ZREM', set, id)
    redis.call('DEL', base .. 'job:' .. id)
    deleted = deleted + 1
  end
  left = left + redis.call('ZCARD', set)
end
if left == 0 then
  -- Flow control's keys go with the queue: the parked ids (their rows), their sets, the limits,
  -- the windows and the groups' counts (docs/protocol.md, "Flow control").
  local groups = redis.pcall('ZRANGE', base .. 'parked', 0, -1)
  if not groups.err then
    for _, g in ipairs(groups) do
      local ids = redis.pcall('ZRANGE', base .. 'group:' .. g, 0, -1)
      if not ids.err then
        for _, id in ipairs(ids) do redis.call('DEL', base .. 'job:' .. id) end
      end
      redis.call('DEL', base .. 'group:' .. g)
    end
  end
  redis.call('DEL', base .. 'meta', base .. 'events', base .. 'outbox', base .. 'limits', base .. 'rate',
    base .. 'groups', base .. 'parked')
end
return { deleted, left }

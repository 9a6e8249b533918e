#!lua flags=allow-oom
-- drain: delete waiting jobs — pending first (claim order), then scheduled (due order), then
--          parked by flow control (group by group) — at most
--          <limit> per call. Active jobs are left alone.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.DRAIN 3 <pending> <schedule> <base> <limit>
-- KEYS[1]  emq:{q}:pending    the ready set
-- KEYS[2]  emq:{q}:schedule   the delayed set
-- KEYS[3]  emq:{q}:           the queue's base; a row is <base>job:<id>
-- ARGV[1]  <limit>            integer from 1 to 10000
-- Reply:   the number of ids deleted (fewer than limit: nothing waits any more)
-- Event:   drained (count) on emq:{q}:events when the count > 0
-- Errors:  shape, limit, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

--- @include "wrongtype"
--- @include "typed"
--- @include "bus"

local pending, schedule, base, limit = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
--- @include "protocol/checks"
if not typed({ pending, schedule }, 'zset') then return wrongtype() end

local n = tonumber(limit)
local ready = redis.call('ZRANGE', pending, 0, n - 1)
local waiting = {}
if #ready < n then waiting = redis.call('ZRANGE', schedule, 0, n - #ready - 1) end
-- Then the ids parked by flow control (docs/protocol.md, "Flow control"), group by group in
-- <base>parked's order; a set of another type holds none.
local parked, room = {}, n - #ready - #waiting
if room > 0 then
  local groups = redis.pcall('ZRANGE', base .. 'parked', 0, -1)
  if not groups.err then
    for _, g in ipairs(groups) do
      if room == 0 then break end
      local ids = redis.pcall('ZRANGE', base .. 'group:' .. g, 0, room - 1)
      if not ids.err and #ids > 0 then
        table.insert(parked, { g, ids })
        room = room - #ids
      end
    end
  end
end
local total = n - room
if total == 0 then return 0 end
for _, pick in ipairs({ { pending, ready }, { schedule, waiting } }) do
  for _, id in ipairs(pick[2]) do
    redis.call('ZREM', pick[1], id)
    redis.call('DEL', base .. 'job:' .. id)
  end
end
for _, pick in ipairs(parked) do
  local set = base .. 'group:' .. pick[1]
  for _, id in ipairs(pick[2]) do
    redis.call('ZREM', set, id)
    redis.call('DEL', base .. 'job:' .. id)
  end
  if redis.call('EXISTS', set) == 0 then redis.call('ZREM', base .. 'parked', pick[1]) end
end
bus(base)('event', 'drained', 'count', string.format('%d', total))
return total

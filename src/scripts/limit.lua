#!lua flags=allow-oom
-- limit: set (or clear) a queue's flow control — its own rate and concurrency, the default
--          limits of its groups, or one group's own — and send every parked id back to pending.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.LIMIT 2 <pending> <base> <scope> <group> <rate_max> <rate_ms> <concurrency>
-- KEYS[1]  emq:{q}:pending    the ready set (parked ids come back here)
-- KEYS[2]  emq:{q}:           the queue's base; limits in <base>limits (flag in <base>meta), parked ids in
--                             <base>group:<g> for each g of <base>parked
-- ARGV[1]  <scope>            queue | default | group | ungroup
-- ARGV[2]  <group>            empty for queue and default; a group label (1-255 bytes, no
--                             control characters) for group and ungroup
-- ARGV[3]  <rate_max>         jobs started per window (0 = no rate; 0 together with rate_ms)
-- ARGV[4]  <rate_ms>          the window in milliseconds (0 = no rate)
-- ARGV[5]  <concurrency>      active jobs at most (0 = no limit)
-- Reply:   the number of parked ids sent back to pending
-- Writes:  queue: concurrency, rate_max, rate_ms (HSET, or HDEL when 0); default:
--          group_concurrency, group_rate_max, group_rate_ms (likewise); group: concurrency:<g>,
--          rate_max:<g>, rate_ms:<g> (HSET, 0 included: 0 = none for that group); ungroup: HDEL
--          those three. <base>meta limits = 1 while <base>limits exists, else HDEL (the flag every
--          claim reads). Then every parked id goes back to pending (score kept), the parked sets
--          and <base>parked are deleted; wake <n> (1 when none moved).
-- Errors:  shape, scope, group, rate max, rate duration, concurrency, rate pair, WRONGTYPE
--- @include "protocol/form"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "typed"
local pending, base = KEYS[1], KEYS[2]
local scope, group, max, ms, concurrency = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if scope ~= 'queue' and scope ~= 'default' and scope ~= 'group' and scope ~= 'ungroup' then
  return refuse('scope must be queue, default, group or ungroup')
end
if scope == 'queue' or scope == 'default' then
  if group ~= '' then return refuse('group must be empty for scope ' .. scope) end
elseif #group == 0 or #group > 255 or string.find(group, '[%c\127]') then
  return refuse('group must be 1-255 bytes without control characters')
end
--- @include "protocol/checks"
if (max == '0') ~= (ms == '0') then return refuse('rate max and duration must both be 0 or both positive') end
local limits, parked, meta = base .. 'limits', base .. 'parked', base .. 'meta'
if not (typed({ pending }, 'zset') and typed({ limits }, 'hash') and typed({ parked }, 'zset') and typed({ meta }, 'hash')) then return wrongtype() end

local names = { 'concurrency', 'rate_max', 'rate_ms' }
local values = { concurrency, max, ms }
for i, name in ipairs(names) do
  if scope == 'queue' or scope == 'default' then
    local field = scope == 'queue' and name or 'group_' .. name
    if values[i] == '0' then redis.call('HDEL', limits, field) else redis.call('HSET', limits, field, values[i]) end
  elseif scope == 'group' then
    redis.call('HSET', limits, name .. ':' .. group, values[i])
  else
    redis.call('HDEL', limits, name .. ':' .. group)
  end
end
-- The flag every claim reads with the bus's setting: the queue has limits.
if redis.call('EXISTS', limits) == 1 then
  redis.call('HSET', meta, 'limits', '1')
else
  redis.call('HDEL', meta, 'limits')
end
local moved = 0
for _, g in ipairs(redis.call('ZRANGE', parked, 0, -1)) do
  local set = base .. 'group:' .. g
  local ids = redis.pcall('ZRANGE', set, 0, -1, 'WITHSCORES')
  if not ids.err then
    for i = 1, #ids, 2 do
      redis.call('ZADD', pending, ids[i + 1], ids[i])
      moved = moved + 1
    end
    redis.call('DEL', set)
  end
end
redis.call('DEL', parked)
redis.pcall('SPUBLISH', base .. 'wake', string.format('%d', moved > 0 and moved or 1))
return moved

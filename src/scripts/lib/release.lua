--- @include "count"
-- Flow control (docs/protocol.md, "Flow control"): <left> ids left active, of the groups <gs>.
-- Each group's active count in <base>groups drops by one (HDEL from 1) and its lowest parked id
-- (<base>group:<g>) goes back to pending; wake <moved>, or wake 1 when none moved and the queue
-- has limits (<limited>: <base>meta limits = 1) with a concurrency (a slot opened). Never fails
-- the call.
local function release(base, gs, left, limited)
  local moved = 0
  for _, g in ipairs(gs) do
    local n = redis.pcall('HGET', base .. 'groups', g)
    if type(n) == 'string' and count(n) and tonumber(n) > 1 then
      redis.call('HSET', base .. 'groups', g, string.format('%d', tonumber(n) - 1))
    elseif type(n) ~= 'table' then
      redis.call('HDEL', base .. 'groups', g)
    end
    local parked = base .. 'group:' .. g
    local first = redis.pcall('ZRANGE', parked, 0, 0, 'WITHSCORES')
    if not first.err and #first > 0 then
      local back = redis.pcall('ZADD', base .. 'pending', first[2], first[1])
      if type(back) == 'number' then
        redis.call('ZREM', parked, first[1])
        if redis.call('EXISTS', parked) == 0 then redis.pcall('ZREM', base .. 'parked', g) end
        moved = moved + 1
      end
    end
  end
  if moved > 0 then
    redis.pcall('SPUBLISH', base .. 'wake', string.format('%d', moved))
  elseif left > 0 and limited then
    local c = redis.pcall('HGET', base .. 'limits', 'concurrency')
    if type(c) == 'string' and count(c) and c ~= '0' then redis.pcall('SPUBLISH', base .. 'wake', '1') end
  end
end

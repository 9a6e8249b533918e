--- @include "emitter"
-- The queue's bus, with its age bound applied first: entries older than <base>meta
-- events_maxage ms (a count, else 86400000; 0 = no age bound) are trimmed (XTRIM MINID ~). Also
-- whether the queue has limits (<base>meta limits = 1).
local function aged_bus(base, now)
  local got = redis.pcall('HMGET', base .. 'meta', 'events_maxlen', 'events_maxage', 'limits')
  if got.err then got = {} end
  local maxage = (got[2] and count(got[2])) and got[2] or '86400000'
  if maxage ~= '0' and now - tonumber(maxage) > 0 then
    redis.pcall('XTRIM', base .. 'events', 'MINID', '~', string.format('%d', now - tonumber(maxage)))
  end
  return emitter(base, got[1]), got[3] == '1'
end

--- @include "count"
-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <stored> kept (the
-- queue's <base>meta events_maxlen: a count, else 10000; 0 = the bus is off). Never fails the call.
local function emitter(base, stored)
  local maxlen = (stored and count(stored)) and stored or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end
end

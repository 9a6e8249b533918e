--- @include "emitter"
-- The queue's bus (its emitter), and whether the queue has limits (<base>meta limits = 1, kept
-- by LIMIT). <base>meta not a hash: the defaults.
local function bus(base)
  local got = redis.pcall('HMGET', base .. 'meta', 'events_maxlen', 'limits')
  if got.err then got = {} end
  return emitter(base, got[1]), got[2] == '1'
end

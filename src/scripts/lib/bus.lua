--- @include "emitter"
--- @include "meta_flags"
-- The queue's bus (its emitter), and whether the queue has limits (<base>meta limits = 1, kept
-- by LIMIT). <base>meta not a hash: the defaults.
local function bus(base)
  local got = meta_flags(base)
  if got.err then got = {} end
  return emitter(base, got[1]), got[2] == '1'
end

--- @include "protocol/refuse"
-- The lease gate (docs/protocol.md): <row> is a job's row (a hash), active (its id in <active>),
-- holding the lease <token>. → nil, or the refusal: job not found, job is not active, stale
-- lease token.
local function leased(active, row, id, token)
  if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
  local f = redis.call('HMGET', row, 'state', 'attempts')
  if f[1] ~= 'active' or not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
  if f[2] ~= token then return refuse('stale lease token') end
end

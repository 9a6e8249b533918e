--- @include "protocol/refuse"
--- @include "typed"
--- @include "wrongtype"
--- @include "leased"
-- The gates of a call on a leased job, in order: the id gate (the JOB prefix), the type gate on
-- <active>, the lease gate. → the row, and nil or the refusal.
local function lease_gates(active, base, id, token)
  if string.sub(id, 1, 3) ~= 'JOB' then return nil, refuse('id must start with JOB') end
  if not typed({ active }, 'zset') then return nil, wrongtype() end
  local row = base .. 'job:' .. id
  return row, leased(active, row, id, token)
end

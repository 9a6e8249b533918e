--- @include "priority"
-- The priority stored in a row (its `priority` field), else 0.
local function row_priority(row)
  return priority(redis.call('HGET', row, 'priority'))
end

-- The row's stack: the failure's <stack>, or none when it is empty (a stale one removed).
local function keep_stack(row, stack)
  if stack == '' then redis.call('HDEL', row, 'stack') else redis.call('HSET', row, 'stack', stack) end
end

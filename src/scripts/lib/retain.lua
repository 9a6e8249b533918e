-- Retention: while <set> holds more than <keep>, the oldest are removed with their rows, at most
-- 10 per call.
local function retain(set, base, keep)
  local over = redis.call('ZCARD', set) - keep
  if over <= 0 then return end
  if over > 10 then over = 10 end
  for _, old in ipairs(redis.call('ZRANGE', set, 0, over - 1)) do
    redis.call('ZREM', set, old)
    redis.call('DEL', base .. 'job:' .. old)
  end
end

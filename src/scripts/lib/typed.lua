-- The type gate: every key of <keys> is of type <want> or absent.
local function typed(keys, want)
  for _, key in ipairs(keys) do
    local t = redis.call('TYPE', key).ok
    if t ~= want and t ~= 'none' then return false end
  end
  return true
end

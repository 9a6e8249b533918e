-- claim: lease the lowest pending id until now + lease.
-- Form:    EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>
-- KEYS[1]  emq:{q}:pending    the ready set
-- KEYS[2]  emq:{q}:active     the leased set (score = deadline ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <lease_ms>         positive integer milliseconds
-- Reply:   {} empty queue | { id, payload, attempts, deadline }  (attempts = the lease token)
-- Errors:  shape, lease, WRONGTYPE, head not a JOB id, head without a row, head already active,
--          row attempts not an integer
-- The pause flag is a host step (declared difference D2): this script claims a paused queue.
local form = 'EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>'
if #KEYS ~= 3 then return redis.error_reply('ERR EMQ.CLAIM wrong number of keys: ' .. form) end
if #ARGV ~= 1 then return redis.error_reply('ERR EMQ.CLAIM wrong number of values: ' .. form) end

local pending, active, base, lease = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
if not string.match(lease, '^[1-9][0-9]*$') or #lease > 15 then
  return redis.error_reply('ERR EMQ.CLAIM lease must be a positive integer of milliseconds')
end
for _, key in ipairs({ pending, active }) do
  local t = redis.call('TYPE', key).ok
  if t ~= 'zset' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
end

local head = redis.call('ZRANGE', pending, 0, 0)
if #head == 0 then return {} end
local id = head[1]
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.CLAIM pending head is not a JOB id') end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then
  return redis.error_reply('ERR EMQ.CLAIM pending head has no job row')
end
if redis.call('ZSCORE', active, id) then
  return redis.error_reply('ERR EMQ.CLAIM pending head is already active')
end

local prior = redis.call('HGET', row, 'attempts') or '0'
if not string.match(prior, '^%d+$') or #prior > 15 then
  return redis.error_reply('ERR EMQ.CLAIM job row has no integer attempts')
end
local attempts = tonumber(prior) + 1
local time = redis.call('TIME')
local deadline = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(lease)
redis.call('ZREM', pending, id)
redis.call('ZADD', active, string.format('%d', deadline), id)
redis.call('HSET', row, 'state', 'active', 'attempts', string.format('%d', attempts))
return { id, redis.call('HGET', row, 'payload'), attempts, deadline }

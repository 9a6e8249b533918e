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
local function wrongtype()
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
-- The type gate on active (a sorted set or absent) runs where it decides something: before any
-- refusal and before the empty reply; on the success path ZADD NX (the first write) is the gate.
local function active_typed()
  local t = redis.call('TYPE', active).ok
  return t == 'zset' or t == 'none'
end
local function refuse(text)
  if not active_typed() then return wrongtype() end
  return redis.error_reply('ERR EMQ.CLAIM ' .. text)
end

local head = redis.pcall('ZRANGE', pending, 0, 0)
if head.err then return head end
if #head == 0 then
  if not active_typed() then return wrongtype() end
  return {}
end
local id = head[1]
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('pending head is not a JOB id') end
local row = base .. 'job:' .. id
local fields = redis.pcall('HMGET', row, 'attempts', 'payload')
if fields.err or (not fields[1] and redis.call('TYPE', row).ok ~= 'hash') then
  return refuse('pending head has no job row')
end

local prior = fields[1] or '0'
if not string.match(prior, '^%d+$') or #prior > 15 then
  if active_typed() and redis.call('ZSCORE', active, id) then return refuse('pending head is already active') end
  return refuse('job row has no integer attempts')
end
local attempts = tonumber(prior) + 1
local time = redis.call('TIME')
local deadline = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(lease)
local added = redis.pcall('ZADD', active, 'NX', string.format('%d', deadline), id)
if type(added) == 'table' then return added end
if added == 0 then return refuse('pending head is already active') end
redis.call('ZREM', pending, id)
redis.call('HSET', row, 'state', 'active', 'attempts', string.format('%d', attempts))
return { id, fields[2], attempts, deadline }

#!lua flags=allow-oom
-- claim: lease the lowest pending id until now + lease, dropping the orphans ahead of it.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>
-- KEYS[1]  emq:{q}:pending    the ready set
-- KEYS[2]  emq:{q}:active     the leased set (score = deadline ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>, the flags <base>meta
-- ARGV[1]  <lease_ms>         positive integer milliseconds
-- Reply:   {} nothing to claim | { id, payload, attempts, deadline, timeout }  (attempts = the
--          lease token; timeout = the row's timeout ms, 0 when none)
-- Orphans: a head without the JOB prefix, or whose row is not a hash, is removed from pending and
--          the next head looked at, at most 100 per call; they are counted in <base>meta
--          orphans (HINCRBY, or HSET when the field is not a count). 100 dropped and the next
--          head an orphan too, or pending empty: {} (the drops stay: not a refusal).
-- Errors:  shape, lease, WRONGTYPE, head already active, row attempts not an integer (nothing
--          written, orphans included)
-- Event:   active (id, attempt) on emq:{q}:events for the job leased
-- The pause flag is a host step (declared difference D2): this script claims a paused queue.
local form = 'EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>'
if #KEYS ~= 3 then return redis.error_reply('ERR EMQ.CLAIM wrong number of keys: ' .. form) end
if #ARGV ~= 1 then return redis.error_reply('ERR EMQ.CLAIM wrong number of values: ' .. form) end

local function count(s) return s == '0' or (#s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil) end
-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept
-- (<base>meta events_maxlen: a count, else 10000; 0 = the bus is off). Never fails the call.
local function bus(base)
  local got = redis.pcall('HGET', base .. 'meta', 'events_maxlen')
  local maxlen = (type(got) == 'string' and count(got)) and got or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end
end

local pending, active, base, lease = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
if not string.match(lease, '^[1-9][0-9]*$') or #lease > 15 then
  return redis.error_reply('ERR EMQ.CLAIM lease must be a positive integer of milliseconds')
end
local function wrongtype()
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
-- The type gate on active (a sorted set or absent) runs where it decides something: before any
-- refusal, any orphan's removal and the empty reply; on the success path ZADD NX (the first
-- write) is the gate.
local function active_typed()
  local t = redis.call('TYPE', active).ok
  return t == 'zset' or t == 'none'
end
local function refuse(text)
  if not active_typed() then return wrongtype() end
  return redis.error_reply('ERR EMQ.CLAIM ' .. text)
end

-- Reads only: the first head that is not an orphan, and the orphans ahead of it (at most 100).
local orphans = {}
local id, row, fields
while true do
  local head = redis.pcall('ZRANGE', pending, #orphans, #orphans)
  if head.err then return head end
  if #head == 0 then break end
  local key = base .. 'job:' .. head[1]
  if string.sub(head[1], 1, 3) == 'JOB' then
    local got = redis.pcall('HMGET', key, 'attempts', 'payload', 'timeout')
    if not got.err and (got[1] or redis.call('TYPE', key).ok == 'hash') then
      id, row, fields = head[1], key, got
      break
    end
  end
  if #orphans == 100 then break end
  table.insert(orphans, head[1])
end
local meta, counted = base .. 'meta', nil
if #orphans > 0 then
  if not active_typed() then return wrongtype() end
  local before = redis.pcall('HGET', meta, 'orphans')
  if type(before) == 'table' and before.err then return before end
  -- HINCRBY on an absent field or a count; any other text is replaced by this call's count.
  counted = not before or before == '0' or (#before <= 15 and string.match(before, '^[1-9]%d*$') ~= nil)
end
-- Writes: the orphans leave pending and are counted (one write), after the claim's own gate.
local function drop()
  if #orphans == 0 then return end
  redis.call('ZREM', pending, unpack(orphans))
  if counted then
    redis.call('HINCRBY', meta, 'orphans', #orphans)
  else
    redis.call('HSET', meta, 'orphans', string.format('%d', #orphans))
  end
end

if not id then
  if not active_typed() then return wrongtype() end
  drop()
  return {}
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
drop()
redis.call('ZREM', pending, id)
redis.call('HSET', row, 'state', 'active', 'attempts', string.format('%d', attempts))
bus(base)('event', 'active', 'id', id, 'attempt', string.format('%d', attempts))
-- The handler's time limit: the row's timeout when it is a count of ms, else 0 (none).
local timeout = fields[3]
if not (timeout and count(timeout)) then timeout = '0' end
return { id, fields[2], attempts, deadline, tonumber(timeout) }

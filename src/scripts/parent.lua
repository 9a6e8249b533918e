#!lua
-- parent: a flow's parent job, waiting for its children (in any queue, on any slot) to settle.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.PARENT 2 <row> <waiting> <id> <payload> <priority> <max_attempts> <children> <on_failure> <parent>
-- KEYS[1]  emq:{q}:job:<id>   the parent's row
-- KEYS[2]  emq:{q}:waiting    the parents waiting for children (score = time added ms)
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <payload>          any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[3]  <priority>         an integer: the score in pending once the children have settled
-- ARGV[4]  <max_attempts>     non-negative integer (0 = the worker decides; not written)
-- ARGV[5]  <children>         positive integer: how many children must settle
-- ARGV[6]  <on_failure>       'fail' (a dead child kills the parent) or 'ignore' (it counts as settled)
-- ARGV[7]  <parent>           empty, or this parent's own parent: <queue> NUL <id> (nested flows)
-- Reply:   1 added | 0 duplicate id (nothing written)
-- Event:   waiting (id, attempt 0) on emq:{q}:events
-- Errors:  shape, payload, priority, max attempts, children, on failure, parent, JOB prefix, WRONGTYPE
--          (see docs/protocol.md, "Flows")
local form = 'EMQ.PARENT 2 <row> <waiting> <id> <payload> <priority> <max_attempts> <children> <on_failure> <parent>'
if #KEYS ~= 2 then return redis.error_reply('ERR EMQ.PARENT wrong number of keys: ' .. form) end
if #ARGV ~= 7 then return redis.error_reply('ERR EMQ.PARENT wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(name, rule) return redis.error_reply('ERR EMQ.PARENT ' .. name .. ' must be ' .. rule) end
-- A size bound (docs/protocol.md, "Value grammars"): at most <max> bytes.
local function within(s, max) return #s <= max end
local function queue(s) return #s >= 1 and #s <= 255 and not string.find(s, '[%z\1-\31\127{}]') end
-- empty, or <queue> NUL <id>: a queue name, then an id with the JOB prefix and no NUL
local function parented(s)
  if s == '' then return true end
  local nul = string.find(s, '\0', 1, true)
  if not nul then return false end
  local q, pid = string.sub(s, 1, nul - 1), string.sub(s, nul + 1)
  return queue(q) and string.sub(pid, 1, 3) == 'JOB' and not string.find(pid, '\0', 1, true)
end

-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept
-- (<base>meta events_maxlen: a count, else 10000; 0 = the bus is off). Never fails the call.
local function bus(base)
  local got = redis.pcall('HGET', base .. 'meta', 'events_maxlen')
  local maxlen = (type(got) == 'string' and count(got)) and got or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end
end

local row, waiting = KEYS[1], KEYS[2]
local id, payload, priority, max, children, policy, parent =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
if not within(payload, 8388608) then return refuse('payload', 'at most 8388608 bytes') end
if not (count(priority) or (string.sub(priority, 1, 1) == '-' and positive(string.sub(priority, 2)))) then
  return refuse('priority', 'an integer')
end
if not count(max) then return refuse('max attempts', 'a non-negative integer') end
if not positive(children) then return refuse('children', 'a positive integer') end
if policy ~= 'fail' and policy ~= 'ignore' then return refuse('on failure', 'fail or ignore') end
if not parented(parent) then return refuse('parent', 'empty or <queue> NUL <id>') end
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.PARENT id must start with JOB') end
if redis.call('EXISTS', row) == 1 then return 0 end
local t = redis.call('TYPE', waiting).ok
if t ~= 'zset' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

local fields = { 'state', 'waiting', 'attempts', '0', 'payload', payload, 'children', children }
if priority ~= '0' then
  table.insert(fields, 'priority')
  table.insert(fields, priority)
end
if max ~= '0' then
  table.insert(fields, 'max_attempts')
  table.insert(fields, max)
end
if policy == 'ignore' then
  table.insert(fields, 'on_failure')
  table.insert(fields, 'ignore')
end
if parent ~= '' then
  table.insert(fields, 'parent')
  table.insert(fields, parent)
end
redis.call('HSET', row, unpack(fields))
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', waiting, string.format('%d', now), id)
bus(string.sub(waiting, 1, -8))('event', 'waiting', 'id', id, 'attempt', '0')
return 1

#!lua flags=allow-oom
-- progress: an active job reports its progress; the latest value is kept on its row.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.PROGRESS 2 <active> <base> <id> <token> <value>
-- KEYS[1]  emq:{q}:active     the leased set (read: the membership half of the lease gate)
-- KEYS[2]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token (the attempts the claim returned), positive integer
-- ARGV[3]  <value>            any bytes, at most 64 KiB (65536 bytes)
-- Reply:   1
-- Writes:  HSET <row> progress <value>
-- Event:   progress (id, attempt, data: the value when at most 200 bytes) on emq:{q}:events
-- Errors:  shape, lease token, progress, JOB prefix, WRONGTYPE, job not found, job is not active, stale
--          lease token (see docs/protocol.md)
local form = 'EMQ.PROGRESS 2 <active> <base> <id> <token> <value>'
if #KEYS ~= 2 then return redis.error_reply('ERR EMQ.PROGRESS wrong number of keys: ' .. form) end
if #ARGV ~= 3 then return redis.error_reply('ERR EMQ.PROGRESS wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.PROGRESS ' .. text) end
-- A size bound (docs/protocol.md, "Value grammars"): at most <max> bytes.
local function within(s, max) return #s <= max end
-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept
-- (<base>meta events_maxlen: a count, else 10000; 0 = the bus is off). Never fails the call.
local function bus(base)
  local got = redis.pcall('HGET', base .. 'meta', 'events_maxlen')
  local maxlen = (type(got) == 'string' and count(got)) and got or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end
end

local active, base, id, token, value = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
if not positive(token) then return refuse('lease token must be a positive integer') end
if not within(value, 65536) then return refuse('progress must be at most 65536 bytes') end
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
local t = redis.call('TYPE', active).ok
if t ~= 'zset' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
local fields = redis.call('HMGET', row, 'state', 'attempts')
if fields[1] ~= 'active' or not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
if fields[2] ~= token then return refuse('stale lease token') end

redis.call('HSET', row, 'progress', value)
if #value <= 200 then
  bus(base)('event', 'progress', 'id', id, 'attempt', token, 'data', value)
else
  bus(base)('event', 'progress', 'id', id, 'attempt', token)
end
return 1

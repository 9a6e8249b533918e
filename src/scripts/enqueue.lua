#!lua
-- enqueue: a new job row and its id in the ready set.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.ENQUEUE 2 <row> <pending> <id> <payload>
-- KEYS[1]  emq:{q}:job:<id>   the job row
-- KEYS[2]  emq:{q}:pending    the ready set
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <payload>          any bytes, at most 8 MiB (8388608 bytes)
-- Reply:   1 enqueued | 0 duplicate id (nothing written)
-- Event:   added (id, attempt 0), on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes (one id entered pending)
-- Errors:  shape, payload, JOB prefix, WRONGTYPE (see docs/protocol.md)
local form = 'EMQ.ENQUEUE 2 <row> <pending> <id> <payload>'
if #KEYS ~= 2 then return redis.error_reply('ERR EMQ.ENQUEUE wrong number of keys: ' .. form) end
if #ARGV ~= 2 then return redis.error_reply('ERR EMQ.ENQUEUE wrong number of values: ' .. form) end

local function count(s) return s == '0' or (#s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil) end
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

local row, pending, id = KEYS[1], KEYS[2], ARGV[1]
if not within(ARGV[2], 8388608) then
  return redis.error_reply('ERR EMQ.ENQUEUE payload must be at most 8388608 bytes')
end
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.ENQUEUE id must start with JOB') end
if redis.call('EXISTS', row) == 1 then return 0 end
local ptype = redis.call('TYPE', pending).ok
if ptype ~= 'zset' and ptype ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', pending, 0, id)
local base = string.sub(pending, 1, -8)
bus(base)('event', 'added', 'id', id, 'attempt', '0')
redis.pcall('SPUBLISH', base .. 'wake', '1')
return 1

#!lua flags=allow-oom
-- pause: set the queue's paused flag; claims then answer nothing (a host step on wire 4).
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.PAUSE 1 <meta>
-- KEYS[1]  emq:{q}:meta       the queue's flags (hash)
-- Reply:   1 paused now | 0 already paused (nothing written)
-- Event:   paused on emq:{q}:events when the flag was set now
-- Errors:  shape, WRONGTYPE (see docs/protocol.md)
local form = 'EMQ.PAUSE 1 <meta>'
if #KEYS ~= 1 then return redis.error_reply('ERR EMQ.PAUSE wrong number of keys: ' .. form) end
if #ARGV ~= 0 then return redis.error_reply('ERR EMQ.PAUSE wrong number of values: ' .. form) end

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

local meta = KEYS[1]
local t = redis.call('TYPE', meta).ok
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if redis.call('HGET', meta, 'paused') == '1' then return 0 end
redis.call('HSET', meta, 'paused', '1')
bus(string.sub(meta, 1, -5))('event', 'paused')
return 1

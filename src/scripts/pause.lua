#!lua flags=allow-oom
-- pause: set the queue's paused flag; claims then answer nothing (a host step on wire 4).
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.PAUSE 1 <meta>
-- KEYS[1]  emq:{q}:meta       the queue's flags (hash)
-- Reply:   1 paused now | 0 already paused (nothing written)
-- Event:   paused on emq:{q}:events when the flag was set now
-- Errors:  shape, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

--- @include "bus"

local meta = KEYS[1]
local t = redis.call('TYPE', meta).ok
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if redis.call('HGET', meta, 'paused') == '1' then return 0 end
redis.call('HSET', meta, 'paused', '1')
bus(string.sub(meta, 1, -5))('event', 'paused')
return 1

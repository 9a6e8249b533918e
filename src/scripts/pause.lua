#!lua flags=allow-oom
-- pause: set the queue's paused flag; claims then answer nothing (a host step on wire 4).
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.PAUSE 1 <meta>
-- KEYS[1]  emq:{q}:meta       the queue's flags (hash)
-- Reply:   1 paused now | 0 already paused (nothing written)
-- Event:   paused on emq:{q}:events when the flag was set now
-- Errors:  shape, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

--- @include "typed"
--- @include "wrongtype"
--- @include "bus"

local meta = KEYS[1]
if not typed({ meta }, 'hash') then return wrongtype() end
if redis.call('HGET', meta, 'paused') == '1' then return 0 end
redis.call('HSET', meta, 'paused', '1')
bus(string.sub(meta, 1, -5))('event', 'paused')
return 1

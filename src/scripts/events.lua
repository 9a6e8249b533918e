#!lua flags=allow-oom
-- events: set the queue's event bus — how many entries its stream keeps, and for how long.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.EVENTS 1 <meta> <maxlen> <maxage_ms>
-- KEYS[1]  emq:{q}:meta       the queue's flags and settings (hash)
-- ARGV[1]  <maxlen>           non-negative integer: entries kept, about (XADD MAXLEN ~); 0 = off
-- ARGV[2]  <maxage_ms>        non-negative integer ms: age kept, about (XTRIM MINID ~, by PROMOTE
--                             and REAP); 0 = no age bound
-- Reply:   1
-- Writes:  HSET <meta> events_maxlen <maxlen> events_maxage <maxage_ms>
-- Errors:  shape, maxlen, max age, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

local meta, maxlen, maxage = KEYS[1], ARGV[1], ARGV[2]
--- @include "protocol/checks"
local t = redis.call('TYPE', meta).ok
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
redis.call('HSET', meta, 'events_maxlen', maxlen, 'events_maxage', maxage)
return 1

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
--- @include "typed"
--- @include "wrongtype"

local meta, maxlen, maxage = KEYS[1], ARGV[1], ARGV[2]
--- @include "protocol/checks"
if not typed({ meta }, 'hash') then return wrongtype() end
redis.call('HSET', meta, 'events_maxlen', maxlen, 'events_maxage', maxage)
return 1

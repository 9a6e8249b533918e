#!lua flags=allow-oom
-- forget: release an idempotency key before its ttl (the next add with it adds a new job).
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.FORGET 2 <pending> <base> <key>
-- KEYS[1]  emq:{q}:pending    the queue whose key it is (as ADD names it; type gate only)
-- KEYS[2]  emq:{q}:           the queue's base; the record is <base>key:<key>
-- ARGV[1]  <key>              empty or 1-255 bytes without a control character
-- Reply:   1 the record was deleted | 0 the key was not held
-- Errors:  shape, key, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

local key = ARGV[1]
--- @include "protocol/checks"
local wrongtype = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local anchor = redis.call('TYPE', KEYS[1]).ok
if anchor ~= 'zset' and anchor ~= 'none' then return redis.error_reply(wrongtype) end
local record = KEYS[2] .. 'key:' .. key
local held = redis.call('TYPE', record).ok
if held == 'none' then return 0 end
if held ~= 'string' then return redis.error_reply(wrongtype) end
redis.call('DEL', record)
return 1

#!lua flags=allow-oom
-- resume: clear the queue's paused flag and wake one idle slot per ready job.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.RESUME 2 <meta> <pending>
-- KEYS[1]  emq:{q}:meta       the queue's flags (hash)
-- KEYS[2]  emq:{q}:pending    the ready set (read: how many ids are ready)
-- Reply:   1 resumed now | 0 was not paused (nothing written)
-- Wake:    SPUBLISH emq:{q}:wake <ids in pending> after the write, when the flag was cleared and
--          pending holds any id
-- Event:   resumed on emq:{q}:events when the flag was cleared now
-- Errors:  shape, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

--- @include "wrongtype"
--- @include "bus"

local meta, pending = KEYS[1], KEYS[2]
local mtype, ptype = redis.call('TYPE', meta).ok, redis.call('TYPE', pending).ok
if (mtype ~= 'hash' and mtype ~= 'none') or (ptype ~= 'zset' and ptype ~= 'none') then return wrongtype() end
if redis.call('HDEL', meta, 'paused') == 0 then return 0 end
local base = string.sub(meta, 1, -5)
bus(base)('event', 'resumed')
local ready = redis.call('ZCARD', pending)
if ready > 0 then redis.pcall('SPUBLISH', base .. 'wake', string.format('%d', ready)) end
return 1

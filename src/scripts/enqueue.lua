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
--- @include "protocol/form"

--- @include "typed"
--- @include "wrongtype"
--- @include "bus"

local row, pending, id = KEYS[1], KEYS[2], ARGV[1]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.ENQUEUE id must start with JOB') end
if redis.call('EXISTS', row) == 1 then return 0 end
if not typed({ pending }, 'zset') then return wrongtype() end

redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', pending, 0, id)
local base = string.sub(pending, 1, -8)
bus(base)('event', 'added', 'id', id, 'attempt', '0')
redis.pcall('SPUBLISH', base .. 'wake', '1')
return 1

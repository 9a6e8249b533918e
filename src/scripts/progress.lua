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
--- @include "protocol/form"

--- @include "lease_gates"
--- @include "bus"

local active, base, id, token, value = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
--- @include "protocol/checks"
local row, refused = lease_gates(active, base, id, token)
if refused then return refused end

redis.call('HSET', row, 'progress', value)
if #value <= 200 then
  bus(base)('event', 'progress', 'id', id, 'attempt', token, 'data', value)
else
  bus(base)('event', 'progress', 'id', id, 'attempt', token)
end
return 1

#!lua
-- update: replaces a job's payload (its data), in any state; the attempts that start from now on
--         read it (a running handler keeps the payload it was given).
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.UPDATE 2 <row> <pending> <id> <payload>
-- KEYS[1]  emq:{q}:job:<id>   the job row
-- KEYS[2]  emq:{q}:pending    the ready set: it names the queue (not read)
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <payload>          any bytes, at most 8 MiB (8388608 bytes)
-- Reply:   1
-- Writes:  HSET <row> payload <payload>
-- Errors:  shape, payload, JOB prefix, job not found (see docs/protocol.md)
--- @include "protocol/form"

--- @include "protocol/refuse"

local row, id, payload = KEYS[1], ARGV[1], ARGV[2]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end

redis.call('HSET', row, 'payload', payload)
return 1

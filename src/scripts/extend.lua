#!lua flags=allow-oom
-- extend: move an active job's lease deadline to now + lease.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.EXTEND 2 <active> <base> <id> <token> <lease_ms>
-- KEYS[1]  emq:{q}:active     the leased set (score = deadline ms)
-- KEYS[2]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token (the attempts the claim returned), positive integer
-- ARGV[3]  <lease_ms>         positive integer milliseconds
-- Reply:   the new deadline (integer ms)
-- Errors:  shape, lease token, lease, JOB prefix, WRONGTYPE, job not found, job is not active,
--          stale lease token (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "lease_gates"

local active, base, id, token, lease = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
--- @include "protocol/checks"
local row, refused = lease_gates(active, base, id, token)
if refused then return refused end

local deadline = now_ms() + tonumber(lease)
redis.call('ZADD', active, string.format('%d', deadline), id)
return deadline

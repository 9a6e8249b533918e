#!lua flags=allow-oom
-- log: an active job appends a line to its log; the row keeps the last 100 lines.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.LOG 2 <active> <base> <id> <token> <line>
-- KEYS[1]  emq:{q}:active     the leased set (read: the membership half of the lease gate)
-- KEYS[2]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token (the attempts the claim returned), positive integer
-- ARGV[3]  <line>             any bytes, at most 16 KiB (16384 bytes)
-- Reply:   the line's number n (lines are numbered from 1 over the job's life)
-- Writes:  n = the row's logs (a count, else 0) + 1; HSET <row> logs <n> log:<n> <line>; when
--          n > 100, HDEL <row> log:<n - 100>
-- Errors:  shape, lease token, line, JOB prefix, WRONGTYPE, job not found, job is not active, stale
--          lease token (see docs/protocol.md)
--- @include "protocol/form"

local KEEP = 100
--- @include "count"
--- @include "lease_gates"

local active, base, id, token, line = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
--- @include "protocol/checks"
local row, refused = lease_gates(active, base, id, token)
if refused then return refused end
local logs = redis.call('HGET', row, 'logs')

local n = ((logs and count(logs)) and tonumber(logs) or 0) + 1
redis.call('HSET', row, 'logs', string.format('%d', n), 'log:' .. string.format('%d', n), line)
if n > KEEP then redis.call('HDEL', row, 'log:' .. string.format('%d', n - KEEP)) end
return n

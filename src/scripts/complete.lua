#!lua flags=allow-oom
-- complete: an active job finished; keep its row in done (with retention) or delete it.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:done       the completed set (score = finish time ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <result>           any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[4]  <keep>             non-negative integer: done keeps at most this many ids (0 = delete the row)
-- Reply:   1
-- Event:   completed (id, attempt, result when at most 1 KiB) on emq:{q}:events
-- Flow:    the job's group slot is released (below)
-- Outbox:  a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id> NUL
--          completed NUL <result>, with the completion (docs/protocol.md, "Flows")
-- Retention: while done holds more than keep, the oldest are removed with their rows, at most 10 per call.
-- Errors:  shape, lease token, result, keep, JOB prefix, WRONGTYPE, job not found, job is not active,
--          stale lease token (see docs/protocol.md)
--- @include "protocol/form"

--- @include "complete_job"

--- @include "protocol/checks"
return complete_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4])

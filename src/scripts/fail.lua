#!lua flags=allow-oom
-- fail: an active attempt failed; the job goes back to pending, waits in schedule, or is dead.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep> <stack>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[4]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[5]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <error>            any bytes, at most 16 KiB (16384), stored in the row's error field
-- ARGV[4]  <backoff>          non-negative integer ms (0 = pending now)
-- ARGV[5]  <max_attempts>     non-negative integer; the row's max_attempts field wins, but 0 = dead now
-- ARGV[6]  <keep>             non-negative integer: dead keeps at most this many ids (0 = delete the row)
-- ARGV[7]  <stack>            any bytes, at most 8 KiB (8192), stored in the row's stack field (empty: none kept)
-- Reply:   the new state: 'pending' | 'scheduled' | 'dead' (bulk string)
-- Dead when attempts >= max_attempts, or <max_attempts> is 0. Retention (dead path): at most 10 oldest removed per call.
-- Events:  failed (id, attempt, reason: the error's first 200 bytes), then dead (id, attempt,
--          reason) or retrying (id, attempt, delay), on emq:{q}:events
-- Outbox:  dead, a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id>
--          NUL failed NUL <error>, with the move (docs/protocol.md, "Flows")
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes when the id entered pending, 0 when it entered
--          schedule (backoff > 0)
-- Errors:  shape, lease token, error, backoff, max attempts, keep, stack, JOB prefix, WRONGTYPE, job not found,
--          job is not active, stale lease token (see docs/protocol.md)
--- @include "protocol/form"

--- @include "fail_job"

--- @include "protocol/checks"
return fail_job(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5],
  ARGV[6], ARGV[7])

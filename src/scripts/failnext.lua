#!lua flags=allow-oom
-- failnext: FAIL, then CLAIM in the same transition — an active attempt failed (the job back to
--          pending, waiting in schedule, or dead) and its slot leases the queue's next job.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.FAILNEXT 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep> <lease_ms> <stack>
-- KEYS[1]  emq:{q}:active     the leased set (the job leaves it, the next job enters it)
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[4]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[5]  emq:{q}:           the queue's base; the rows <base>job:<id>, the flags <base>meta,
--                             flow control <base>limits, rate, groups, group:<g>, parked
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <error>            any bytes, at most 16 KiB (16384), stored in the row's error field
-- ARGV[4]  <backoff>          non-negative integer ms (0 = pending now)
-- ARGV[5]  <max_attempts>     non-negative integer; the row's max_attempts field wins, but 0 = dead now
-- ARGV[6]  <keep>             non-negative integer: dead keeps at most this many ids (0 = delete the row)
-- ARGV[7]  <lease_ms>         positive integer milliseconds: the next job's lease
-- ARGV[8]  <stack>            any bytes, at most 8 KiB (8192), stored in the row's stack field (empty: none kept)
-- Reply:   {state} failed, nothing leased (pending empty, the queue paused, or the claim refused)
--          | {state, <wait ms>} failed, the claim limited (claim.lua's integer)
--          | {state, id, payload, attempts, deadline, timeout} failed, the next job leased
--          (state: 'pending' | 'scheduled' | 'dead', FAIL's reply)
-- Steps:   every value checked (the lease too), then the failure (fail_job, FAIL's gates and
--          writes: a refusal there writes nothing), then the pause read (<base>meta paused = 1,
--          or meta not a hash: nothing leased) and the claim (lease_next, CLAIM's) — which may
--          lease the failed job itself again when it went back to pending at the head, as a
--          CLAIM after the FAIL would. A refusal of the claim leases nothing and leaves the
--          failure standing: the reply is {state}.
-- Events:  failed, then retrying or dead (FAIL's), then active (id, attempt) for the job leased
-- The pause flag is read here, not by the host (declared difference D11).
--- @include "protocol/form"
--- @include "fail_job"
--- @include "and_next"

--- @include "protocol/checks"
local active, pending, schedule, dead, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local failed = fail_job(active, pending, schedule, dead, base, ARGV[1], ARGV[2], ARGV[3], ARGV[4],
  ARGV[5], ARGV[6], ARGV[8])
if type(failed) == 'table' then return failed end
return and_next(failed, pending, active, base, ARGV[7])

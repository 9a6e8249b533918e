#!lua flags=allow-oom
-- completenext: COMPLETE, then CLAIM in the same transition — an active job finished (its row
--          kept in done with retention, or deleted) and its slot leases the queue's next job.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.COMPLETENEXT 4 <active> <done> <pending> <base> <id> <token> <result> <keep> <lease_ms>
-- KEYS[1]  emq:{q}:active     the leased set (the job leaves it, the next job enters it)
-- KEYS[2]  emq:{q}:done       the completed set (score = finish time ms)
-- KEYS[3]  emq:{q}:pending    the ready set
-- KEYS[4]  emq:{q}:           the queue's base; the rows <base>job:<id>, the flags <base>meta,
--                             flow control <base>limits, rate, groups, group:<g>, parked, schedule
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <result>           any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[4]  <keep>             non-negative integer: done keeps at most this many ids (0 = delete the row)
-- ARGV[5]  <lease_ms>         positive integer milliseconds: the next job's lease
-- Reply:   {1} completed, nothing leased (pending empty, the queue paused, or the claim refused)
--          | {1, <wait ms>} completed, the claim limited (claim.lua's integer)
--          | {1, id, payload, attempts, deadline, timeout} completed, the next job leased
-- Steps:   every value checked (the lease too), then the completion (complete_job, COMPLETE's
--          gates and writes: a refusal there writes nothing), then the pause read (<base>meta
--          paused = 1, or meta not a hash: nothing leased) and the claim (lease_next, CLAIM's). A
--          refusal of the claim leases nothing and leaves the completion standing: the reply is {1}.
-- Event:   completed (id, attempt, result when at most 1 KiB), written after the claim: one
--          entry, with next (id) and next_attempt (attempt) when a job was leased
-- The pause flag is read here, not by the host (declared difference D10).
--- @include "protocol/form"
--- @include "complete_job"
--- @include "and_next"

--- @include "protocol/checks"
local active, done, pending, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local completed = complete_job(active, done, base, ARGV[1], ARGV[2], ARGV[3], ARGV[4], true)
if type(completed) == 'table' then return completed end
return and_next(completed, pending, active, base, ARGV[5], completed_entry(ARGV[1], ARGV[2], ARGV[3]))

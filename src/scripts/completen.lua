#!lua flags=allow-oom
-- completen: COMPLETE for each of up to 1000 leased jobs, then CLAIM up to <next> times, in one
--          transition — the settlements a worker has ready together, and the slots they free
--          that take a next job, in one call.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.COMPLETEN 4 <active> <done> <pending> <base> <keep> <lease_ms> <next> <id> <token> <result> [<id> <token> <result> ...]
-- KEYS[1]  emq:{q}:active     the leased set (the jobs leave it, the next jobs enter it)
-- KEYS[2]  emq:{q}:done       the completed set (score = finish time ms)
-- KEYS[3]  emq:{q}:pending    the ready set
-- KEYS[4]  emq:{q}:           the queue's base; the rows <base>job:<id>, the flags <base>meta,
--                             flow control <base>limits, rate, groups, group:<g>, parked, schedule
-- ARGV[1]  <keep>             non-negative integer: done keeps at most this many ids (0 = delete the rows)
-- ARGV[2]  <lease_ms>         positive integer milliseconds: each next job's lease
-- ARGV[3]  <next>             non-negative integer: claims at most (and at most one per triple)
-- ARGV[4…] <id> <token> <result>, 1 to 1000 triples: a branded id, its lease token (positive
--                             integer), its result (any bytes, at most 8 MiB)
-- Reply:   { outcomes, job, job, … } — outcomes one per triple in order: 1 (completed) or the
--          refusal's text (that job untouched); then CLAIM's { id, payload, attempts, deadline,
--          timeout } per job leased, a limited claim's integer ending the list when one stopped it.
-- Steps:   every value checked (each triple's too), then per triple the completion (complete_job,
--          COMPLETE's gates and writes: a refusal writes nothing for that job and is its outcome),
--          then, with <next> > 0, the pause read (<base>meta paused = 1, or meta not a hash:
--          nothing leased) and up to min(<next>, triples) claims (lease_next, CLAIM's), stopping
--          at the first that finds nothing, is limited or is refused (the completions stand);
--          on a queue without limits their heads are taken in one pop (heads_of), what was not
--          leased put back at its score: pending as the claims in a row leave it.
-- Events:  completed (id, attempt, result when at most 1 KiB) per job completed, in order,
--          written after the claims: the k-th with next (id) and next_attempt (attempt) of the
--          k-th job leased, when one was — one entry for both events, as COMPLETENEXT's
-- The pause flag is read here, not by the host (declared difference D13, as COMPLETENEXT's D10).
--- @include "protocol/form"
--- @include "complete_job"
--- @include "meta_flags"
--- @include "lease_next"
--- @include "heads_of"
--- @include "emitter"
--- @include "completed_entry"
--- @include "with_next"

--- @include "protocol/checks"
local active, done, pending, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local outcomes, landed = {}, {}
for at = 4, #ARGV, 3 do
  local completed = complete_job(active, done, base, ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[1], true)
  -- A refusal is this job's outcome, as text; the other jobs go on.
  if type(completed) == 'table' then
    completed = completed.err
  else
    table.insert(landed, at)
  end
  table.insert(outcomes, completed)
end
local reply = { outcomes }
local claims = math.min(tonumber(ARGV[3]), #outcomes)
-- No entry to write and no claim to make: <base>meta is not read.
if #landed == 0 and claims == 0 then return reply end
local flags = meta_flags(base)
-- The entries, after the claims: each completion that landed, with the job leased in its place.
local function entries()
  local emit = emitter(base, not flags.err and flags[1] or nil)
  for k, at in ipairs(landed) do
    local job = reply[k + 1]
    local entry = completed_entry(ARGV[at], ARGV[at + 1], ARGV[at + 2])
    emit(unpack(with_next(entry, type(job) == 'table' and job or nil)))
  end
  return reply
end
if claims == 0 or flags.err or flags[3] == '1' then return entries() end
-- The claims' heads in one pop (a queue without limits: a limited claim may stop before its pop).
local heads = claims > 1 and flags[2] ~= '1' and heads_of(pending, claims) or nil
for _ = 1, claims do
  -- A claim's refusal, returned or raised, ends the claims; the completions and the jobs before stand.
  local ok, leased = pcall(lease_next, pending, active, base, ARGV[2], true, heads)
  if not ok then break end
  if type(leased) == 'number' then
    table.insert(reply, leased)
    break
  end
  if leased.err or #leased == 0 then break end
  table.insert(reply, leased)
end
if heads then heads.restore() end
return entries()

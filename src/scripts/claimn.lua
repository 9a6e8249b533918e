#!lua flags=allow-oom
-- claimn:  CLAIM up to <count> times in one transition — a worker's free slots leased in one call,
--          each job under its own lease (token and deadline), exactly as <count> claims in a row.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.CLAIMN 3 <pending> <active> <base> <lease_ms> <count>
-- KEYS[1]  emq:{q}:pending    the ready set
-- KEYS[2]  emq:{q}:active     the leased set (score = deadline ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>, the flags <base>meta,
--                             flow control <base>limits, rate, groups, group:<g>, parked, schedule
-- ARGV[1]  <lease_ms>         positive integer milliseconds: each job's lease
-- ARGV[2]  <count>            an integer from 1 to 10000: jobs leased at most
-- Reply:   { job, job, … } in the order leased, each CLAIM's { id, payload, attempts, deadline,
--          timeout }; the claims stop at the first that finds nothing, or that is limited (its
--          integer, CLAIM's, then ends the array: { job, …, <wait ms> }).
-- Steps:   every value checked, then the pause read (<base>meta paused = 1: {}; meta not a hash:
--          WRONGTYPE), then the claims (lease_next, CLAIM's). The first claim's refusal is the
--          reply (nothing written); a later claim's refusal ends the array, the jobs before it
--          leased (the next claim meets it). On a queue without limits the heads are taken
--          up to 100 at a time in one pop (heads_of), what was not leased put back at its
--          score: pending as the claims in a row leave it.
-- Event:   active (id, attempt) per job leased
-- The pause flag is read here, not by the host (declared D12, as COMPLETENEXT's D10).
--- @include "protocol/form"
--- @include "wrongtype"
--- @include "meta_flags"
--- @include "lease_next"
--- @include "heads_of"

--- @include "protocol/checks"
local pending, active, base = KEYS[1], KEYS[2], KEYS[3]
local flags = meta_flags(base)
if flags.err then return wrongtype() end
if flags[3] == '1' then return {} end
local jobs = {}
local count = tonumber(ARGV[2])
-- The claims' heads, up to 100 at a time in one pop (a queue without limits: a limited claim
-- may stop before its pop).
local heads = count > 1 and flags[2] ~= '1' and heads_of(pending, math.min(count, 100)) or nil
for n = 1, count do
  local leased
  if n == 1 then
    leased = lease_next(pending, active, base, ARGV[1], nil, heads)
  else
    -- A later claim's refusal, returned or raised, ends the array; the jobs before it stand.
    local ok, got = pcall(lease_next, pending, active, base, ARGV[1], nil, heads)
    if not ok then break end
    leased = got
  end
  if type(leased) == 'number' then
    table.insert(jobs, leased)
    break
  end
  if leased.err then
    if n == 1 then
      if heads then heads.restore() end
      return leased
    end
    break
  end
  if #leased == 0 then break end
  table.insert(jobs, leased)
end
if heads then heads.restore() end
return jobs

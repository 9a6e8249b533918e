--- @include "meta_flags"
--- @include "lease_next"
--- @include "emitter"
--- @include "with_next"
-- The claim after a settlement (COMPLETENEXT, FAILNEXT: docs/protocol.md), its writes done: the
-- pause read (declared differences D10, D11: <base>meta paused = 1, or meta not a hash → nothing
-- leased), then the claim (lease_next) on <pending>, <active>, <base> for <lease> ms. → {settled}
-- (nothing leased: pending empty, paused, or the claim refused, the settlement standing),
-- {settled, <wait ms>} (the claim limited) or {settled, id, payload, attempts, deadline, timeout}.
-- With <entry> (the settlement's own entry, not yet written: COMPLETENEXT's completed), the
-- claim writes no active entry: <entry> is written last, with next <id> next_attempt <attempts>
-- when a job was leased — one entry for both events.
local function and_next(settled, pending, active, base, lease, entry)
  local flags = meta_flags(base)
  local function reply(leased)
    if entry then emitter(base, not flags.err and flags[1] or nil)(unpack(with_next(entry, leased))) end
    if leased then return { settled, leased[1], leased[2], leased[3], leased[4], leased[5] } end
    return { settled }
  end
  if flags.err or flags[3] == '1' then return reply(nil) end
  local leased = lease_next(pending, active, base, lease, entry ~= nil)
  if type(leased) == 'number' then
    local limited = reply(nil)
    table.insert(limited, leased)
    return limited
  end
  if leased.err or #leased == 0 then return reply(nil) end
  return reply(leased)
end

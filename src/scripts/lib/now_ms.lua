-- Server time in integer ms (docs/protocol.md, Conventions): TIME, read once per call and kept.
-- Inside one script TIME reports the command's cached clock, so a transition that settles and
-- leases (COMPLETEN, CLAIMN) reads the same now at every step for one TIME, not one per step.
local now_seen
local function now_ms()
  if not now_seen then
    local time = redis.call('TIME')
    now_seen = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return now_seen
end

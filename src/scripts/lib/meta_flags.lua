-- <base>meta's flags as one read per call: { events_maxlen, limits, paused } (HMGET's reply;
-- `.err` set when <base>meta is not a hash). Read once and kept for the rest of the call, so a
-- transition that settles a job and leases the next one, or leases many, pays one read, not
-- one per step. Nothing a caller runs between its reads writes these three fields.
local meta_seen = {}
local function meta_flags(base)
  local got = meta_seen[base]
  if not got then
    got = redis.pcall('HMGET', base .. 'meta', 'events_maxlen', 'limits', 'paused')
    meta_seen[base] = got
  end
  return got
end

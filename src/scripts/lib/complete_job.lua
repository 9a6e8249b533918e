--- @include "now_ms"
--- @include "protocol/refuse"
--- @include "typed"
--- @include "wrongtype"
--- @include "gated"
--- @include "retain"
--- @include "bus"
--- @include "release"
--- @include "completed_entry"
-- The completion (docs/protocol.md, EMQ.COMPLETE), after the values step: the job <id> holding
-- lease <token> leaves <active>; its row keeps <result> in <done> (at most <keep> ids kept), or
-- is deleted (keep 0); a flow child's outbox entry; the group slot released; the completed
-- event (its entry: completed_entry). → 1, or the refusal (nothing written). Refusals name the
-- including script's verb. A transition that also claims the next job (COMPLETENEXT) passes
-- <later> (the entry is then its to write, after the claim: and_next) and calls and_next after it.
local function complete_job(active, done, base, id, token, result, keep, later)
  if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
  local outbox = base .. 'outbox'
  -- done's type gate where the call writes it (keep > 0): keep 0 never touches done.
  if keep ~= '0' and not typed({ done }, 'zset') then return wrongtype() end
  -- The type gate on active runs where it decides something: before any later refusal; on the
  -- success path ZREM (the first write) is the gate, and its count is the membership gate.
  local row = base .. 'job:' .. id
  local fields = redis.pcall('HMGET', row, 'state', 'attempts', 'parent', 'group')
  if fields.err or (fields[1] ~= 'active' and redis.call('TYPE', row).ok ~= 'hash') then
    return gated(active, 'job not found')
  end
  if fields[1] ~= 'active' then return gated(active, 'job is not active') end
  if fields[2] ~= token then
    if not typed({ active }, 'zset') then return wrongtype() end
    if not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
    return refuse('stale lease token')
  end
  -- A flow's child (a row with a parent) writes its outbox: its type gate, before any write.
  local child = fields[3] and fields[3] ~= ''
  if child and not typed({ outbox }, 'zset') then return wrongtype() end

  local left = redis.pcall('ZREM', active, id)
  if type(left) == 'table' then return left end
  if left == 0 then return refuse('job is not active') end
  local emit, limited = bus(base)
  release(base, (fields[4] and fields[4] ~= '') and { fields[4] } or {}, 1, limited)
  if not later then emit(unpack(completed_entry(id, token, result))) end
  if keep == '0' and not child then
    redis.call('DEL', row)
    return 1
  end
  local now = now_ms()
  if child then
    redis.call('ZADD', outbox, string.format('%d', now), fields[3] .. '\0' .. id .. '\0completed\0' .. result)
  end
  if keep == '0' then
    redis.call('DEL', row)
    return 1
  end
  redis.call('HSET', row, 'state', 'completed', 'result', result)
  redis.call('ZADD', done, string.format('%d', now), id)
  retain(done, base, tonumber(keep))
  return 1
end

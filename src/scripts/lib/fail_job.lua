--- @include "now_ms"
--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "positive"
--- @include "typed"
--- @include "leased"
--- @include "row_priority"
--- @include "retain"
--- @include "bus"
--- @include "release"
--- @include "keep_stack"
-- The failure (docs/protocol.md, EMQ.FAIL), after the values step: the attempt of job <id>
-- holding lease <token> failed with <err>; the job leaves <active> for <dead> when its attempts
-- reach <max> (the row's own max_attempts wins, but <max> 0 is dead now; at most <keep> ids kept, keep 0 deletes the
-- row), else for <pending> (backoff 0) or <schedule> (due now + backoff); the group slot
-- released; the events and the wake. → 'pending' | 'scheduled' | 'dead', or the refusal
-- (nothing written). The row's stack field is <stack>, or none when it is empty (written with the
-- state). Refusals name the including script's verb. A transition that also claims
-- the next job (FAILNEXT) calls lease_next after it.
local function fail_job(active, pending, schedule, dead, base, id, token, err, backoff, max, keep, stack)
  if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
  local outbox = base .. 'outbox'
  if not typed({ active, pending, schedule, dead, outbox }, 'zset') then return wrongtype() end
  local row = base .. 'job:' .. id
  local refused = leased(active, row, id, token)
  if refused then return refused end

  local own = redis.call('HGET', row, 'max_attempts')
  if own and positive(own) and max ~= '0' then max = own end
  local now = now_ms()
  local group = redis.call('HGET', row, 'group')
  redis.call('ZREM', active, id)
  local emit, limited = bus(base)
  release(base, (group and group ~= '') and { group } or {}, 1, limited)
  local reason = string.sub(err, 1, 200)
  emit('event', 'failed', 'id', id, 'attempt', token, 'reason', reason)
  if tonumber(token) >= tonumber(max) then
    emit('event', 'dead', 'id', id, 'attempt', token, 'reason', reason)
    local parent = redis.call('HGET', row, 'parent')
    if parent and parent ~= '' then
      redis.call('ZADD', outbox, string.format('%d', now), parent .. '\0' .. id .. '\0failed\0' .. err)
    end
    if keep == '0' then
      redis.call('DEL', row)
    else
      redis.call('HSET', row, 'state', 'dead', 'error', err)
      keep_stack(row, stack)
      redis.call('ZADD', dead, string.format('%d', now), id)
      retain(dead, base, tonumber(keep))
    end
    return 'dead'
  end
  emit('event', 'retrying', 'id', id, 'attempt', token, 'delay', backoff)
  if backoff == '0' then
    local score = row_priority(row)
    redis.call('HSET', row, 'state', 'pending', 'error', err)
    keep_stack(row, stack)
    redis.call('ZADD', pending, score, id)
    redis.pcall('SPUBLISH', base .. 'wake', '1')
    return 'pending'
  end
  redis.call('HSET', row, 'state', 'scheduled', 'error', err)
  keep_stack(row, stack)
  redis.call('ZADD', schedule, string.format('%d', now + tonumber(backoff)), id)
  redis.pcall('SPUBLISH', base .. 'wake', '0')
  return 'scheduled'
end

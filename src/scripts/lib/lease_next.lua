--- @include "now_ms"
--- @include "gated"
--- @include "count"
--- @include "wrongtype"
--- @include "priority"
--- @include "emitter"
--- @include "meta_flags"
-- The claim (docs/protocol.md, EMQ.CLAIM): lease the lowest pending id of <pending> into <active>
-- until now + <lease> ms, dropping the orphans ahead of it, under the queue's flow control; the
-- reply is CLAIM's (see claim.lua). Refusals name the including script's verb. A transition that
-- ends by claiming the next job (a completion that also claims) calls this after its own writes;
-- <quiet>: no active entry (the caller writes the lease into its own entry: and_next). <heads>:
-- the heads a caller claiming many took ahead (heads_of), taken here in place of this claim's pop.
local function lease_next(pending, active, base, lease, quiet, heads)
  -- A stored limit or window field: a count, else 0 (absent or any other text: none).
  local function num(s) return (type(s) == 'string' and count(s)) and tonumber(s) or 0 end

  -- The type gate on active (a sorted set or absent) runs where it decides something: before any
  -- refusal, any orphan's removal and the empty reply; on the success path ZADD NX (active's
  -- first write) is the gate.
  local function active_typed()
    local t = redis.call('TYPE', active).ok
    return t == 'zset' or t == 'none'
  end

  -- <base>meta: the bus's events_maxlen and the flag limits = 1 (the queue has limits; kept by
  -- LIMIT). Not a hash: the defaults.
  local flags = meta_flags(base)
  if flags.err then flags = {} end
  local limited = flags[2] == '1'
  -- Flow control (docs/protocol.md, "Flow control"), reads only: the queue's limits (when it has
  -- any), then its concurrency and its rate window.
  local limits, rate, groups = base .. 'limits', base .. 'rate', base .. 'groups'
  local lim = {}
  if limited then
    lim = redis.pcall('HMGET', limits, 'concurrency', 'rate_max', 'rate_ms', 'group_concurrency',
      'group_rate_max', 'group_rate_ms')
    if lim.err then return lim end
  end
  local clock = now_ms
  -- The window of fields <start>/<n> in <base>rate under max per ms: the ms until it opens when
  -- full (0: open), and the count it holds while running (nil: the claim starts it).
  local function window(start, n, max, ms)
    local got = redis.pcall('HMGET', rate, start, n)
    if got.err then return got end
    if not (got[1] and count(got[1])) or clock() >= tonumber(got[1]) + ms then return 0, nil end
    if num(got[2]) >= max then return tonumber(got[1]) + ms - clock(), num(got[2]) end
    return 0, num(got[2])
  end
  local concurrency, qmax, qms = num(lim[1]), num(lim[2]), num(lim[3])
  if concurrency > 0 then
    local n = redis.pcall('ZCARD', active)
    if type(n) == 'table' then return n end
    if n >= concurrency then return 0 end
  end
  local qcount
  if qmax > 0 and qms > 0 then
    local wait, n = window('start', 'count', qmax, qms)
    if type(wait) == 'table' then return wait end
    if wait > 0 then return wait end
    qcount = n
  end
  -- A group's limits: its own fields (concurrency:<g>; rate_max:<g> with rate_ms:<g>) when set,
  -- else the defaults. → verdict: nil (claim it), 'park', or the due time of its window; and for
  -- a claim the group's active count and its window ({ count } while running, {} to start one,
  -- nil without a rate).
  local function judge(g)
    local own = {}
    if limited then
      own = redis.pcall('HMGET', limits, 'concurrency:' .. g, 'rate_max:' .. g, 'rate_ms:' .. g)
      if own.err then return own end
    end
    local gc = own[1] and num(own[1]) or num(lim[4])
    local gmax, gms = num(lim[5]), num(lim[6])
    if own[2] or own[3] then gmax, gms = num(own[2]), num(own[3]) end
    local n = redis.pcall('HGET', groups, g)
    if type(n) == 'table' then return n end
    if gc > 0 and num(n) >= gc then return 'park' end
    if gmax > 0 and gms > 0 then
      local wait, held = window('start:' .. g, 'count:' .. g, gmax, gms)
      if type(wait) == 'table' then return wait end
      if wait > 0 then return clock() + wait end
      return nil, num(n), { held }
    end
    return nil, num(n), nil
  end

  local orphans, parks, delays = {}, {}, {}
  local id, row, fields, group, gcount, gwindow
  local bounded = false
  -- The common head in one command: the lowest pending id taken (ZPOPMIN) and its row read. A
  -- head the loop below must judge (not a job's id, no row or no attempts, a group's) goes back
  -- at its own score first; <popped> keeps the score of one taken, so a refusal below puts it back.
  -- A pending id's row key, and the fields a claim reads of it (none for an id not a job's).
  local function row_of(job)
    local key = base .. 'job:' .. job
    if string.sub(job, 1, 3) ~= 'JOB' then return key, nil end
    return key, redis.pcall('HMGET', key, 'attempts', 'payload', 'group', 'priority', 'timeout')
  end
  local top = heads and heads.take() or redis.pcall('ZPOPMIN', pending)
  if top.err then return top end
  local popped
  if #top > 0 then
    local key, got = row_of(top[1])
    if got and not got.err and got[1] and not (got[3] and got[3] ~= '') then
      id, row, fields, popped = top[1], key, got, top[2]
    else
      -- The loop reads pending: every head taken ahead goes back first.
      if heads then heads.restore() end
      redis.call('ZADD', pending, top[2], top[1])
    end
  end
  local function unpop()
    if popped then redis.call('ZADD', pending, popped, id) end
  end

  -- Reads only: the first head that is neither an orphan nor held back by its group, and the ids
  -- ahead of it (at most 100).
  while #top > 0 and not id do
    local skipped = #orphans + #parks + #delays
    local head = redis.pcall('ZRANGE', pending, skipped, skipped)
    if head.err then return head end
    if #head == 0 then break end
    local key, got = row_of(head[1])
    local verdict, n, held
    if got and (got.err or not (got[1] or redis.call('TYPE', key).ok == 'hash')) then got = nil end
    if got and got[3] and got[3] ~= '' then
      verdict, n, held = judge(got[3])
      if type(verdict) == 'table' then return verdict end
    end
    if got and verdict == nil then
      id, row, fields = head[1], key, got
      if got[3] and got[3] ~= '' then group, gcount, gwindow = got[3], n, held end
      break
    end
    if skipped == 100 then
      bounded = true
      break
    end
    if not got then
      table.insert(orphans, head[1])
    elseif verdict == 'park' then
      table.insert(parks, { head[1], got[3], priority(got[4]) })
    else
      table.insert(delays, { head[1], key, verdict })
    end
  end
  local meta, counted = base .. 'meta', nil
  if #orphans > 0 then
    if not active_typed() then return wrongtype() end
    local before = redis.pcall('HGET', meta, 'orphans')
    if type(before) == 'table' and before.err then return before end
    -- HINCRBY on an absent field or a count; any other text is replaced by this call's count.
    counted = not before or count(before)
  end
  -- Writes: the orphans leave pending and are counted (one write), the held-back heads move, after
  -- the claim's own gate.
  local function skip()
    if #orphans > 0 then
      redis.call('ZREM', pending, unpack(orphans))
      if counted then
        redis.call('HINCRBY', meta, 'orphans', #orphans)
      else
        redis.call('HSET', meta, 'orphans', string.format('%d', #orphans))
      end
    end
    for _, p in ipairs(parks) do
      redis.call('ZREM', pending, p[1])
      redis.call('ZADD', base .. 'group:' .. p[2], p[3], p[1])
      redis.call('ZADD', base .. 'parked', 0, p[2])
    end
    for _, d in ipairs(delays) do
      redis.call('ZREM', pending, d[1])
      redis.call('HSET', d[2], 'state', 'scheduled')
      redis.call('ZADD', base .. 'schedule', string.format('%d', d[3]), d[1])
    end
    if #delays > 0 then redis.pcall('SPUBLISH', base .. 'wake', '0') end
  end
  -- A window counts the claim: one more while running (held), else it starts now.
  local function counts(start, n, held)
    if held then
      redis.call('HSET', rate, n, string.format('%d', held + 1))
    else
      redis.call('HSET', rate, start, string.format('%d', clock()), n, '1')
    end
  end

  if not id then
    if not active_typed() then return wrongtype() end
    skip()
    if bounded and #parks + #delays > 0 then return 1 end
    return {}
  end
  local prior = fields[1] or '0'
  if not string.match(prior, '^%d+$') or #prior > 15 then
    unpop()
    if active_typed() and redis.call('ZSCORE', active, id) then return gated(active, 'pending head is already active') end
    return gated(active, 'job row has no integer attempts')
  end
  local attempts = tonumber(prior) + 1
  local deadline = clock() + tonumber(lease)
  local added = redis.pcall('ZADD', active, 'NX', string.format('%d', deadline), id)
  if type(added) == 'table' or added == 0 then unpop() end
  if type(added) == 'table' then return added end
  if added == 0 then return gated(active, 'pending head is already active') end
  skip()
  if not popped then redis.call('ZREM', pending, id) end
  -- processed_on: when this attempt's lease was granted (the now its deadline is counted from).
  redis.call('HSET', row, 'state', 'active', 'attempts', string.format('%d', attempts),
    'processed_on', string.format('%d', clock()))
  if group then redis.call('HSET', groups, group, string.format('%d', gcount + 1)) end
  if qmax > 0 and qms > 0 then counts('start', 'count', qcount) end
  if gwindow then counts('start:' .. group, 'count:' .. group, gwindow[1]) end
  if not quiet then
    emitter(base, flags[1])('event', 'active', 'id', id, 'attempt', string.format('%d', attempts))
  end
  -- The handler's time limit: the row's timeout when it is a count of ms, else 0 (none).
  local timeout = fields[5]
  if not (timeout and count(timeout)) then timeout = '0' end
  return { id, fields[2], attempts, deadline, tonumber(timeout) }
end

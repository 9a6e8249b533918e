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
-- Steps:   complete.lua's values, then the lease's, then complete.lua's gates and writes (a
--          refusal there writes nothing); then the pause read (<base>meta paused = 1, or meta not
--          a hash: nothing leased) and claim.lua's claim. A refusal of the claim leases nothing
--          and leaves the completion standing: the reply is {1}.
-- Event:   completed (id, attempt), then active (id, attempt) for the job leased
-- The pause flag is read here, not by the host (declared difference D10).
local form = 'EMQ.COMPLETENEXT 4 <active> <done> <pending> <base> <id> <token> <result> <keep> <lease_ms>'
if #KEYS ~= 4 then return redis.error_reply('ERR EMQ.COMPLETENEXT wrong number of keys: ' .. form) end
if #ARGV ~= 5 then return redis.error_reply('ERR EMQ.COMPLETENEXT wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.COMPLETENEXT ' .. text) end
-- A size bound (docs/protocol.md, "Value grammars"): at most <max> bytes.
local function within(s, max) return #s <= max end
local function typed(keys, want)
  for _, key in ipairs(keys) do
    local t = redis.call('TYPE', key).ok
    if t ~= want and t ~= 'none' then return false end
  end
  return true
end
local function retain(set, base, keep)
  local over = redis.call('ZCARD', set) - keep
  if over <= 0 then return end
  if over > 10 then over = 10 end
  for _, old in ipairs(redis.call('ZRANGE', set, 0, over - 1)) do
    redis.call('ZREM', set, old)
    redis.call('DEL', base .. 'job:' .. old)
  end
end

-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept
-- (<base>meta events_maxlen: a count, else 10000; 0 = the bus is off). Never fails the call.
-- Also whether the queue has limits (<base>meta limits = 1, kept by LIMIT).
local function bus(base)
  local got = redis.pcall('HMGET', base .. 'meta', 'events_maxlen', 'limits')
  if got.err then got = {} end
  local maxlen = (got[1] and count(got[1])) and got[1] or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end, got[2] == '1'
end

-- Flow control (docs/protocol.md, "Flow control"): <left> ids left active, of the groups <gs>.
-- Each group's active count in <base>groups drops by one (HDEL from 1) and its lowest parked id
-- (<base>group:<g>) goes back to pending; wake <moved>, or wake 1 when none moved and the queue
-- has limits (<limited>: <base>meta limits = 1) with a concurrency (a slot opened). Never fails
-- the call.
local function release(base, gs, left, limited)
  local moved = 0
  for _, g in ipairs(gs) do
    local n = redis.pcall('HGET', base .. 'groups', g)
    if type(n) == 'string' and count(n) and tonumber(n) > 1 then
      redis.call('HSET', base .. 'groups', g, string.format('%d', tonumber(n) - 1))
    elseif type(n) ~= 'table' then
      redis.call('HDEL', base .. 'groups', g)
    end
    local parked = base .. 'group:' .. g
    local first = redis.pcall('ZRANGE', parked, 0, 0, 'WITHSCORES')
    if not first.err and #first > 0 then
      local back = redis.pcall('ZADD', base .. 'pending', first[2], first[1])
      if type(back) == 'number' then
        redis.call('ZREM', parked, first[1])
        if redis.call('EXISTS', parked) == 0 then redis.pcall('ZREM', base .. 'parked', g) end
        moved = moved + 1
      end
    end
  end
  if moved > 0 then
    redis.pcall('SPUBLISH', base .. 'wake', string.format('%d', moved))
  elseif left > 0 and limited then
    local c = redis.pcall('HGET', base .. 'limits', 'concurrency')
    if type(c) == 'string' and count(c) and c ~= '0' then redis.pcall('SPUBLISH', base .. 'wake', '1') end
  end
end

-- A stored limit or window field: a count, else 0 (absent or any other text: none).
local function num(s) return (type(s) == 'string' and count(s)) and tonumber(s) or 0 end
-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept
-- (<base>meta events_maxlen, read with the flags: a count, else 10000; 0 = the bus is off).
-- Never fails the call.
local function claim_bus(base, stored)
  local maxlen = (stored and count(stored)) and stored or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end
end

local active, done, pending, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, token, result, keep, lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not positive(token) then return refuse('lease token must be a positive integer') end
if not within(result, 8388608) then return refuse('result must be at most 8388608 bytes') end
if not count(keep) then return refuse('keep must be a non-negative integer') end
if not positive(lease) then return refuse('lease must be a positive integer of milliseconds') end
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end

-- complete.lua's gates and writes: 1, or its refusal (nothing written).
local function completion()
  local function wrongtype()
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
  local outbox = base .. 'outbox'
  if not typed({ done }, 'zset') then return wrongtype() end
  -- The type gate on active runs where it decides something: before any later refusal; on the
  -- success path ZREM (the first write) is the gate, and its count is the membership gate.
  local function gated(text)
    if not typed({ active }, 'zset') then return wrongtype() end
    return refuse(text)
  end
  local row = base .. 'job:' .. id
  local fields = redis.pcall('HMGET', row, 'state', 'attempts', 'parent', 'group')
  if fields.err or (fields[1] ~= 'active' and redis.call('TYPE', row).ok ~= 'hash') then
    return gated('job not found')
  end
  if fields[1] ~= 'active' then return gated('job is not active') end
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
  emit('event', 'completed', 'id', id, 'attempt', token)
  if keep == '0' and not child then
    redis.call('DEL', row)
    return 1
  end
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
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

-- claim.lua's claim after the pause read (<flags>: HMGET <base>meta paused events_maxlen limits):
-- its reply, or its refusal (nothing written).
local function lease_next(flags)
  local function wrongtype()
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
  local function active_typed()
    local t = redis.call('TYPE', active).ok
    return t == 'zset' or t == 'none'
  end
  local function refuse(text)
    if not active_typed() then return wrongtype() end
    return redis.error_reply('ERR EMQ.COMPLETENEXT ' .. text)
  end
  local limited = flags[3] == '1'
  -- Flow control (docs/protocol.md, "Flow control"), reads only: the queue's limits (when it has
  -- any), then its concurrency and its rate window.
  local limits, rate, groups = base .. 'limits', base .. 'rate', base .. 'groups'
  local lim = {}
  if limited then
    lim = redis.pcall('HMGET', limits, 'concurrency', 'rate_max', 'rate_ms', 'group_concurrency',
      'group_rate_max', 'group_rate_ms')
    if lim.err then return lim end
  end
  local now
  local function clock()
    if not now then
      local time = redis.call('TIME')
      now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    return now
  end
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

  -- Reads only: the first head that is neither an orphan nor held back by its group, and the ids
  -- ahead of it (at most 100).
  local orphans, parks, delays = {}, {}, {}
  local id, row, fields, group, gcount, gwindow
  local bounded = false
  while true do
    local skipped = #orphans + #parks + #delays
    local head = redis.pcall('ZRANGE', pending, skipped, skipped)
    if head.err then return head end
    if #head == 0 then break end
    local key = base .. 'job:' .. head[1]
    local got, verdict, n, held
    if string.sub(head[1], 1, 3) == 'JOB' then
      got = redis.pcall('HMGET', key, 'attempts', 'payload', 'group', 'priority', 'timeout')
      if got.err or not (got[1] or redis.call('TYPE', key).ok == 'hash') then got = nil end
    end
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
      local p = got[4]
      if not (p and (count(p) or (string.sub(p, 1, 1) == '-' and p ~= '-0' and count(string.sub(p, 2))))) then p = '0' end
      table.insert(parks, { head[1], got[3], p })
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
    counted = not before or before == '0' or (#before <= 15 and string.match(before, '^[1-9]%d*$') ~= nil)
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
    if active_typed() and redis.call('ZSCORE', active, id) then return refuse('pending head is already active') end
    return refuse('job row has no integer attempts')
  end
  local attempts = tonumber(prior) + 1
  local deadline = clock() + tonumber(lease)
  local added = redis.pcall('ZADD', active, 'NX', string.format('%d', deadline), id)
  if type(added) == 'table' then return added end
  if added == 0 then return refuse('pending head is already active') end
  skip()
  redis.call('ZREM', pending, id)
  redis.call('HSET', row, 'state', 'active', 'attempts', string.format('%d', attempts))
  if group then redis.call('HSET', groups, group, string.format('%d', gcount + 1)) end
  if qmax > 0 and qms > 0 then counts('start', 'count', qcount) end
  if gwindow then counts('start:' .. group, 'count:' .. group, gwindow[1]) end
  claim_bus(base, flags[2])('event', 'active', 'id', id, 'attempt', string.format('%d', attempts))
  -- The handler's time limit: the row's timeout when it is a count of ms, else 0 (none).
  local timeout = fields[5]
  if not (timeout and count(timeout)) then timeout = '0' end
  return { id, fields[2], attempts, deadline, tonumber(timeout) }
end

local done_reply = completion()
if type(done_reply) == 'table' then return done_reply end
local flags = redis.pcall('HMGET', base .. 'meta', 'paused', 'events_maxlen', 'limits')
if flags.err or flags[1] == '1' then return { done_reply } end
local leased = lease_next(flags)
if type(leased) == 'number' then return { done_reply, leased } end
if leased.err or #leased == 0 then return { done_reply } end
return { done_reply, leased[1], leased[2], leased[3], leased[4], leased[5] }

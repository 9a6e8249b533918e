#!lua flags=allow-oom
-- fail: an active attempt failed; the job goes back to pending, waits in schedule, or is dead.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:schedule   the delayed set (score = due time ms)
-- KEYS[4]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[5]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <error>            any bytes, at most 16 KiB (16384), stored in the row's error field
-- ARGV[4]  <backoff>          non-negative integer ms (0 = pending now)
-- ARGV[5]  <max_attempts>     positive integer; the row's max_attempts field wins
-- ARGV[6]  <keep>             non-negative integer: dead keeps at most this many ids (0 = delete the row)
-- Reply:   the new state: 'pending' | 'scheduled' | 'dead' (bulk string)
-- Dead when attempts >= max_attempts. Retention (dead path): at most 10 oldest removed per call.
-- Events:  failed (id, attempt, reason: the error's first 200 bytes), then dead (id, attempt,
--          reason) or retrying (id, attempt, delay), on emq:{q}:events
-- Outbox:  dead, a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id>
--          NUL failed NUL <error>, with the move (docs/protocol.md, "Flows")
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes when the id entered pending, 0 when it entered
--          schedule (backoff > 0)
-- Errors:  shape, lease token, error, backoff, max attempts, keep, JOB prefix, WRONGTYPE, job not found,
--          job is not active, stale lease token (see docs/protocol.md)
local form = 'EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep>'
if #KEYS ~= 5 then return redis.error_reply('ERR EMQ.FAIL wrong number of keys: ' .. form) end
if #ARGV ~= 6 then return redis.error_reply('ERR EMQ.FAIL wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.FAIL ' .. text) end
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
local function priority(row)
  local p = redis.call('HGET', row, 'priority')
  if p and (count(p) or (string.sub(p, 1, 1) == '-' and positive(string.sub(p, 2)))) then return p end
  return '0'
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

local active, pending, schedule, dead, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, token, err, backoff, max, keep = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
if not positive(token) then return refuse('lease token must be a positive integer') end
if not within(err, 16384) then return refuse('error must be at most 16384 bytes') end
if not count(backoff) then return refuse('backoff must be a non-negative integer of milliseconds') end
if not positive(max) then return refuse('max attempts must be a positive integer') end
if not count(keep) then return refuse('keep must be a non-negative integer') end
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
local outbox = base .. 'outbox'
if not typed({ active, pending, schedule, dead, outbox }, 'zset') then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
if redis.call('HGET', row, 'state') ~= 'active' or not redis.call('ZSCORE', active, id) then
  return refuse('job is not active')
end
if redis.call('HGET', row, 'attempts') ~= token then return refuse('stale lease token') end

local own = redis.call('HGET', row, 'max_attempts')
if own and positive(own) then max = own end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
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
    redis.call('ZADD', dead, string.format('%d', now), id)
    retain(dead, base, tonumber(keep))
  end
  return 'dead'
end
emit('event', 'retrying', 'id', id, 'attempt', token, 'delay', backoff)
if backoff == '0' then
  local score = priority(row)
  redis.call('HSET', row, 'state', 'pending', 'error', err)
  redis.call('ZADD', pending, score, id)
  redis.pcall('SPUBLISH', base .. 'wake', '1')
  return 'pending'
end
redis.call('HSET', row, 'state', 'scheduled', 'error', err)
redis.call('ZADD', schedule, string.format('%d', now + tonumber(backoff)), id)
redis.pcall('SPUBLISH', base .. 'wake', '0')
return 'scheduled'

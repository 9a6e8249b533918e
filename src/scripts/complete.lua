#!lua flags=allow-oom
-- complete: an active job finished; keep its row in done (with retention) or delete it.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:done       the completed set (score = finish time ms)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <result>           any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[4]  <keep>             non-negative integer: done keeps at most this many ids (0 = delete the row)
-- Reply:   1
-- Event:   completed (id, attempt) on emq:{q}:events
-- Flow:    the job's group slot is released (below)
-- Outbox:  a row with a parent (a flow's child): ZADD <base>outbox <now> <parent> NUL <id> NUL
--          completed NUL <result>, with the completion (docs/protocol.md, "Flows")
-- Retention: while done holds more than keep, the oldest are removed with their rows, at most 10 per call.
-- Errors:  shape, lease token, result, keep, JOB prefix, WRONGTYPE, job not found, job is not active,
--          stale lease token (see docs/protocol.md)
local form = 'EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>'
if #KEYS ~= 3 then return redis.error_reply('ERR EMQ.COMPLETE wrong number of keys: ' .. form) end
if #ARGV ~= 4 then return redis.error_reply('ERR EMQ.COMPLETE wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.COMPLETE ' .. text) end
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

local active, done, base = KEYS[1], KEYS[2], KEYS[3]
local id, token, result, keep = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if not positive(token) then return refuse('lease token must be a positive integer') end
if not within(result, 8388608) then return refuse('result must be at most 8388608 bytes') end
if not count(keep) then return refuse('keep must be a non-negative integer') end
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
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

#!lua flags=allow-oom
-- requeue: an active job goes back to pending now without consuming its attempt.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>
-- KEYS[1]  emq:{q}:active     the leased set
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token, positive integer
-- ARGV[3]  <max_attempts>     positive integer; the row's max_attempts field wins
-- Reply:   1
-- Writes:  the row's max_attempts becomes M + 1 (M: the row's own when a positive integer, else
--          the given one): attempts never decreases (it is the lease token), so the limit rises
--          by the attempt handed back.
-- Event:   requeued (id, attempt) on emq:{q}:events
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes (one id entered pending)
-- Errors:  shape, lease token, max attempts, JOB prefix, WRONGTYPE, job not found, job is not
--          active, stale lease token (see docs/protocol.md)
local form = 'EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>'
if #KEYS ~= 3 then return redis.error_reply('ERR EMQ.REQUEUE wrong number of keys: ' .. form) end
if #ARGV ~= 3 then return redis.error_reply('ERR EMQ.REQUEUE wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.REQUEUE ' .. text) end
local function typed(keys, want)
  for _, key in ipairs(keys) do
    local t = redis.call('TYPE', key).ok
    if t ~= want and t ~= 'none' then return false end
  end
  return true
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

local active, pending, base = KEYS[1], KEYS[2], KEYS[3]
local id, token, max = ARGV[1], ARGV[2], ARGV[3]
if not positive(token) then return refuse('lease token must be a positive integer') end
if not positive(max) then return refuse('max attempts must be a positive integer') end
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
if not typed({ active, pending }, 'zset') then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
local fields = redis.call('HMGET', row, 'state', 'attempts', 'priority', 'max_attempts', 'group')
if fields[1] ~= 'active' or not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
if fields[2] ~= token then return refuse('stale lease token') end

local priority = fields[3]
if not (priority and (count(priority) or (string.sub(priority, 1, 1) == '-' and positive(string.sub(priority, 2))))) then
  priority = '0'
end
local own = fields[4]
if own and positive(own) then max = own end
redis.call('ZREM', active, id)
local emit, limited = bus(base)
release(base, (fields[5] and fields[5] ~= '') and { fields[5] } or {}, 1, limited)
redis.call('HSET', row, 'state', 'pending', 'max_attempts', string.format('%d', tonumber(max) + 1))
redis.call('ZADD', pending, priority, id)
emit('event', 'requeued', 'id', id, 'attempt', token)
redis.pcall('SPUBLISH', base .. 'wake', '1')
return 1

#!lua flags=allow-oom
-- reap: expired leases go back to pending, or to dead when their attempts are used up.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>
-- KEYS[1]  emq:{q}:active     the leased set (score = deadline ms)
-- KEYS[2]  emq:{q}:pending    the ready set (score = the row's priority, absent = 0)
-- KEYS[3]  emq:{q}:dead       the exhausted set (score = time ms)
-- KEYS[4]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <limit>            integer from 1 to 10000
-- ARGV[2]  <max_attempts>     positive integer; the row's max_attempts field wins
-- ARGV[3]  <keep>             non-negative integer: dead keeps at most this many ids (0 = delete the row)
-- Reply:   { {<ids back in pending>...}, {<ids dead>...} }
-- Picks:   ZRANGE <active> -inf (<now> BYSCORE LIMIT 0 <limit> (deadline before now). An orphan
--          (row not a hash, or not a JOB id) is only removed from active.
-- Dead:    as in FAIL, with error 'lease expired'; retention at most 10 oldest per call.
-- Events:  the age trim of emq:{q}:events (XTRIM MINID ~ now - maxage), once; then per expired id
--          with a row: stalled (id, attempt), and dead (id, attempt, reason 'lease expired')
--          when out of attempts
-- Outbox:  each id dead whose row has a parent (a flow's child): ZADD <base>outbox <now> <parent>
--          NUL <id> NUL failed NUL lease expired (docs/protocol.md, "Flows")
-- Wake:    SPUBLISH emq:{q}:wake <ids back in pending> after the writes, when there are any
-- Errors:  shape, limit, max attempts, keep, WRONGTYPE (see docs/protocol.md)
local form = 'EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>'
if #KEYS ~= 4 then return redis.error_reply('ERR EMQ.REAP wrong number of keys: ' .. form) end
if #ARGV ~= 3 then return redis.error_reply('ERR EMQ.REAP wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.REAP ' .. text) end
local function typed(keys, want)
  for _, key in ipairs(keys) do
    local t = redis.call('TYPE', key).ok
    if t ~= want and t ~= 'none' then return false end
  end
  return true
end
local function priority(row)
  local p = redis.call('HGET', row, 'priority')
  if p and (count(p) or (string.sub(p, 1, 1) == '-' and positive(string.sub(p, 2)))) then return p end
  return '0'
end
-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept, and
-- the age trim (<base>meta events_maxlen, a count else 10000, 0 = off; events_maxage, a count
-- else 86400000, 0 = no age bound). Never fails the call.
local function bus(base, now)
  local got = redis.pcall('HMGET', base .. 'meta', 'events_maxlen', 'events_maxage', 'limits')
  if got.err then got = {} end
  local maxlen = (got[1] and count(got[1])) and got[1] or '10000'
  local maxage = (got[2] and count(got[2])) and got[2] or '86400000'
  if maxage ~= '0' and now - tonumber(maxage) > 0 then
    redis.pcall('XTRIM', base .. 'events', 'MINID', '~', string.format('%d', now - tonumber(maxage)))
  end
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end, got[3] == '1'
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

local active, pending, dead, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local limit, max, keep = ARGV[1], ARGV[2], ARGV[3]
if not positive(limit) or tonumber(limit) > 10000 then return refuse('limit must be an integer from 1 to 10000') end
if not positive(max) then return refuse('max attempts must be a positive integer') end
if not count(keep) then return refuse('keep must be a non-negative integer') end
local outbox = base .. 'outbox'
if not typed({ active, pending, dead, outbox }, 'zset') then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local stamp = string.format('%d', now)
local expired = redis.call('ZRANGE', active, '-inf', '(' .. stamp, 'BYSCORE', 'LIMIT', 0, limit)
local emit, limited = bus(base, now)
local requeued, buried, gs = {}, {}, {}
for _, id in ipairs(expired) do
  redis.call('ZREM', active, id)
  local row = base .. 'job:' .. id
  if string.sub(id, 1, 3) == 'JOB' and redis.call('TYPE', row).ok == 'hash' then
    local group = redis.call('HGET', row, 'group')
    if group and group ~= '' then table.insert(gs, group) end
    local attempts = redis.call('HGET', row, 'attempts')
    attempts = (attempts and count(attempts)) and tonumber(attempts) or 0
    local own = redis.call('HGET', row, 'max_attempts')
    local most = tonumber((own and positive(own)) and own or max)
    emit('event', 'stalled', 'id', id, 'attempt', string.format('%d', attempts))
    if attempts >= most then
      emit('event', 'dead', 'id', id, 'attempt', string.format('%d', attempts), 'reason', 'lease expired')
      local parent = redis.call('HGET', row, 'parent')
      if parent and parent ~= '' then
        redis.call('ZADD', outbox, stamp, parent .. '\0' .. id .. '\0failed\0lease expired')
      end
      if keep == '0' then
        redis.call('DEL', row)
      else
        redis.call('HSET', row, 'state', 'dead', 'error', 'lease expired')
        redis.call('ZADD', dead, stamp, id)
      end
      table.insert(buried, id)
    else
      local score = priority(row)
      redis.call('HSET', row, 'state', 'pending')
      redis.call('ZADD', pending, score, id)
      table.insert(requeued, id)
    end
  end
end
if #buried > 0 and keep ~= '0' then
  local over = redis.call('ZCARD', dead) - tonumber(keep)
  if over > 10 then over = 10 end
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', dead, 0, over - 1)) do
      redis.call('ZREM', dead, old)
      redis.call('DEL', base .. 'job:' .. old)
    end
  end
end
release(base, gs, #expired, limited)
if #requeued > 0 then redis.pcall('SPUBLISH', base .. 'wake', string.format('%d', #requeued)) end
return { requeued, buried }

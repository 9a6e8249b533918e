#!lua
-- add: a new job row, ready now (pending, score = priority) or due later (schedule), with the
--      trace context of its creation, its group, timeout and flow parent when given, and the
--      caller's idempotency key when one is given.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts> <trace> <group> <key> <key_ttl> <timeout> <parent>
-- KEYS[1]  emq:{q}:job:<id>   the job row
-- KEYS[2]  emq:{q}:pending    the ready set (score = priority)
-- KEYS[3]  emq:{q}:schedule   the delayed set (score = due time ms)
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <payload>          any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[3]  <priority>         an integer: optional '-', then 0 or 1-15 digits without a leading zero
-- ARGV[4]  <delay>            non-negative integer ms from now (0 = ready now)
-- ARGV[5]  <max_attempts>     non-negative integer (0 = the worker decides; not written)
-- ARGV[6]  <trace>            empty (none; not written), or a W3C traceparent in lower-case hex,
--                             optionally ';' and a tracestate of printable ASCII; <= 512 bytes
-- ARGV[7]  <group>            empty (none), or a label: 1-255 bytes, no control character
-- ARGV[8]  <key>              empty (none), or a label: the caller's idempotency key
-- ARGV[9]  <key_ttl>          non-negative integer ms the key is kept (0 = until deleted)
-- ARGV[10] <timeout>          non-negative integer ms a handler may run (0 = none; not written)
-- ARGV[11] <parent>           empty (none), or <parent queue> NUL <parent id>: the flow parent
-- Reply:   1 added | 0 duplicate id (nothing written) | the first job's id when <key> is held
--          (nothing written)
-- Event:   added (id, attempt 0) when ready now; delayed (id, attempt 0, delay) when not
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes when the id entered pending (delay 0), 0 when
--          it entered schedule (a promoter then knows a due time changed)
-- Key:     <base>key:<key> holds the id (PX <key_ttl> when not 0), written with the job
-- Errors:  shape, payload, priority, delay, max attempts, trace, group, key, key ttl, timeout, parent,
--          JOB prefix, WRONGTYPE (see docs/protocol.md)
local form = 'EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts> <trace> <group> <key> <key_ttl> <timeout> <parent>'
if #KEYS ~= 3 then return redis.error_reply('ERR EMQ.ADD wrong number of keys: ' .. form) end
if #ARGV ~= 11 then return redis.error_reply('ERR EMQ.ADD wrong number of values: ' .. form) end

local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(name, rule) return redis.error_reply('ERR EMQ.ADD ' .. name .. ' must be ' .. rule) end
-- A size bound (docs/protocol.md, "Value grammars"): at most <max> bytes.
local function within(s, max) return #s <= max end
-- The trace grammar: '<version>-<trace-id>-<parent-id>-<flags>' (2, 32, 16, 2 lower-case hex
-- digits; version not ff, neither id all zeros), optionally ';' and 1+ printable ASCII bytes.
local function traced(s)
  if s == '' then return true end
  if #s > 512 then return false end
  local head, state = s, nil
  local semi = string.find(s, ';', 1, true)
  if semi then head, state = string.sub(s, 1, semi - 1), string.sub(s, semi + 1) end
  local v, t, p = string.match(head, '^([0-9a-f][0-9a-f])%-([0-9a-f]+)%-([0-9a-f]+)%-[0-9a-f][0-9a-f]$')
  if v == nil or v == 'ff' or #t ~= 32 or #p ~= 16 then return false end
  if t == string.rep('0', 32) or p == string.rep('0', 16) then return false end
  return state == nil or string.match(state, '^[ -~]+$') ~= nil
end
-- A label (a group, an idempotency key): empty (none), or 1-255 bytes without a control byte.
local function label(s) return #s <= 255 and string.find(s, '[%z\1-\31\127]') == nil end
-- A flow parent: empty (none), or '<queue>' NUL '<id>': a queue name (1-255 bytes, no brace, no
-- control byte) and an id with the JOB prefix.
local function parented(s)
  if s == '' then return true end
  local at = string.find(s, '\0', 1, true)
  if at == nil or at == 1 or at > 256 then return false end
  local queue, pid = string.sub(s, 1, at - 1), string.sub(s, at + 1)
  return string.find(queue, '[%z\1-\31\127{}]') == nil and string.sub(pid, 1, 3) == 'JOB'
    and string.find(pid, '[%z\1-\31\127]') == nil
end
local function typed(keys, want)
  for _, key in ipairs(keys) do
    local t = redis.call('TYPE', key).ok
    if t ~= want and t ~= 'none' then return false end
  end
  return true
end

-- The bus (docs/protocol.md, "The event bus"): entries on <base>events, about <maxlen> kept
-- (<base>meta events_maxlen: a count, else 10000; 0 = the bus is off). Never fails the call.
local function bus(base)
  local got = redis.pcall('HGET', base .. 'meta', 'events_maxlen')
  local maxlen = (type(got) == 'string' and count(got)) and got or '10000'
  return function(...)
    if maxlen ~= '0' then redis.pcall('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', ...) end
  end
end

local row, pending, schedule = KEYS[1], KEYS[2], KEYS[3]
local id, payload, priority, delay, max, trace = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local group, idem, ttl, timeout, parent = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
if not within(payload, 8388608) then return refuse('payload', 'at most 8388608 bytes') end
if not (count(priority) or (string.sub(priority, 1, 1) == '-' and positive(string.sub(priority, 2)))) then
  return refuse('priority', 'an integer')
end
if not count(delay) then return refuse('delay', 'a non-negative integer of milliseconds') end
if not count(max) then return refuse('max attempts', 'a non-negative integer') end
if not traced(trace) then
  return refuse('trace', 'empty or a W3C traceparent, optionally ;tracestate, of at most 512 bytes')
end
if not label(group) then return refuse('group', 'empty or 1-255 bytes without a control character') end
if not label(idem) then return refuse('key', 'empty or 1-255 bytes without a control character') end
if not count(ttl) then return refuse('key ttl', 'a non-negative integer of milliseconds') end
if not count(timeout) then return refuse('timeout', 'a non-negative integer of milliseconds') end
if not parented(parent) then
  return refuse('parent', 'empty or a queue name, a NUL byte and an id with the JOB prefix')
end
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.ADD id must start with JOB') end
local base = string.sub(pending, 1, -8)
local record = base .. 'key:' .. idem
if idem ~= '' then
  local held = redis.call('TYPE', record).ok
  if held == 'string' then return redis.call('GET', record) end
  if held ~= 'none' then return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
end
if redis.call('EXISTS', row) == 1 then return 0 end
if not typed({ pending, schedule }, 'zset') then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

local fields = { 'state', delay == '0' and 'pending' or 'scheduled', 'attempts', '0', 'payload', payload }
if priority ~= '0' then
  table.insert(fields, 'priority')
  table.insert(fields, priority)
end
if max ~= '0' then
  table.insert(fields, 'max_attempts')
  table.insert(fields, max)
end
for _, field in ipairs({ { 'trace', trace, '' }, { 'group', group, '' }, { 'timeout', timeout, '0' }, { 'parent', parent, '' } }) do
  if field[2] ~= field[3] then
    table.insert(fields, field[1])
    table.insert(fields, field[2])
  end
end
redis.call('HSET', row, unpack(fields))
if idem ~= '' then
  if ttl == '0' then redis.call('SET', record, id) else redis.call('SET', record, id, 'PX', ttl) end
end
if delay == '0' then
  redis.call('ZADD', pending, priority, id)
  bus(base)('event', 'added', 'id', id, 'attempt', '0')
  redis.pcall('SPUBLISH', base .. 'wake', '1')
else
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('ZADD', schedule, string.format('%d', now + tonumber(delay)), id)
  bus(base)('event', 'delayed', 'id', id, 'attempt', '0', 'delay', delay)
  redis.pcall('SPUBLISH', base .. 'wake', '0')
end
return 1

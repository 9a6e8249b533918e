#!lua
-- add: a new job row, ready now (pending, score = priority) or due later (schedule), with the
--      trace context of its creation, its group, timeout and flow parent when given, and the
--      caller's idempotency key when one is given, its name and its own backoff when given.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts> <trace> <group> <key> <key_ttl> <timeout> <parent> <name> <backoff>
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
-- ARGV[12] <name>             empty (none), or a label: the job's name
-- ARGV[13] <backoff>          empty (none), or a label: the job's own backoff, as the host encodes it
-- Reply:   1 added | 0 duplicate id (nothing written) | the first job's id when <key> is held
--          (nothing written)
-- Event:   added (id, attempt 0) when ready now; delayed (id, attempt 0, delay) when not
-- Wake:    SPUBLISH emq:{q}:wake 1 after the writes when the id entered pending (delay 0), 0 when
--          it entered schedule (a promoter then knows a due time changed)
-- Key:     <base>key:<key> holds the id (PX <key_ttl> when not 0), written with the job
-- Errors:  shape, payload, priority, delay, max attempts, trace, group, key, key ttl, timeout, parent,
--          name, backoff, JOB prefix, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"
--- @include "now_ms"

--- @include "wrongtype"
--- @include "typed"
--- @include "unless"
--- @include "bus"

local row, pending, schedule = KEYS[1], KEYS[2], KEYS[3]
local id, payload, priority, delay, max, trace = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local group, idem, ttl, timeout, parent = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
local name, backoff = ARGV[12], ARGV[13]
--- @include "protocol/checks"
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.ADD id must start with JOB') end
local base = string.sub(pending, 1, -8)
local record = base .. 'key:' .. idem
if idem ~= '' then
  local held = redis.call('TYPE', record).ok
  if held == 'string' then return redis.call('GET', record) end
  if held ~= 'none' then return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
end
if redis.call('EXISTS', row) == 1 then return 0 end
if not typed({ pending, schedule }, 'zset') then return wrongtype() end

local fields = { 'state', delay == '0' and 'pending' or 'scheduled', 'attempts', '0', 'payload', payload }
unless(fields, 'priority', priority, '0')
unless(fields, 'max_attempts', max, '0')
for _, field in ipairs({ { 'trace', trace, '' }, { 'group', group, '' }, { 'timeout', timeout, '0' }, { 'parent', parent, '' },
  { 'name', name, '' }, { 'backoff', backoff, '' } }) do
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
  local now = now_ms()
  redis.call('ZADD', schedule, string.format('%d', now + tonumber(delay)), id)
  bus(base)('event', 'delayed', 'id', id, 'attempt', '0', 'delay', delay)
  redis.pcall('SPUBLISH', base .. 'wake', '0')
end
return 1

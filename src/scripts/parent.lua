#!lua
-- parent: a flow's parent job, waiting for its children (in any queue, on any slot) to settle,
--         with its name and its own backoff when given.
-- Memory:  an admission (no shebang flags): over maxmemory the server refuses it before it runs
-- Form:    EMQ.PARENT 2 <row> <waiting> <id> <payload> <priority> <max_attempts> <children> <on_failure> <parent> <name> <backoff>
-- KEYS[1]  emq:{q}:job:<id>   the parent's row
-- KEYS[2]  emq:{q}:waiting    the parents waiting for children (score = time added ms)
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <payload>          any bytes, at most 8 MiB (8388608 bytes)
-- ARGV[3]  <priority>         an integer: the score in pending once the children have settled
-- ARGV[4]  <max_attempts>     non-negative integer (0 = the worker decides; not written)
-- ARGV[5]  <children>         positive integer: how many children must settle
-- ARGV[6]  <on_failure>       'fail' (a dead child kills the parent) or 'ignore' (it counts as settled)
-- ARGV[7]  <parent>           empty, or this parent's own parent: <queue> NUL <id> (nested flows)
-- ARGV[8]  <name>             empty (none), or a label: the parent's name (as ADD's)
-- ARGV[9]  <backoff>          empty (none), or a label: its own backoff, as the host encodes it
-- Reply:   1 added | 0 duplicate id (nothing written)
-- Event:   waiting (id, attempt 0) on emq:{q}:events
-- Errors:  shape, payload, priority, max attempts, children, on failure, parent, name, backoff, JOB
--          prefix, WRONGTYPE
--          (see docs/protocol.md, "Flows")
--- @include "protocol/form"
--- @include "now_ms"

--- @include "typed"
--- @include "wrongtype"
--- @include "must"
--- @include "unless"
--- @include "queue"
--- @include "bus"
-- empty, or <queue> NUL <id>: a queue name, then an id with the JOB prefix and no NUL
local function ancestor(s)
  if s == '' then return true end
  local nul = string.find(s, '\0', 1, true)
  if not nul then return false end
  local q, pid = string.sub(s, 1, nul - 1), string.sub(s, nul + 1)
  return queue(q) and string.sub(pid, 1, 3) == 'JOB' and not string.find(pid, '\0', 1, true)
end

local row, waiting = KEYS[1], KEYS[2]
local id, payload, priority, max, children, policy, parent =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local name, backoff = ARGV[8], ARGV[9]
--- @include "protocol/checks"
if policy ~= 'fail' and policy ~= 'ignore' then return must('on failure', 'fail or ignore') end
if not ancestor(parent) then return must('parent', 'empty or <queue> NUL <id>') end
if string.sub(id, 1, 3) ~= 'JOB' then return redis.error_reply('ERR EMQ.PARENT id must start with JOB') end
if redis.call('EXISTS', row) == 1 then return 0 end
if not typed({ waiting }, 'zset') then return wrongtype() end

local fields = { 'state', 'waiting', 'attempts', '0', 'payload', payload, 'children', children }
unless(fields, 'priority', priority, '0')
unless(fields, 'max_attempts', max, '0')
if policy == 'ignore' then
  table.insert(fields, 'on_failure')
  table.insert(fields, 'ignore')
end
unless(fields, 'parent', parent, '')
unless(fields, 'name', name, '')
unless(fields, 'backoff', backoff, '')
redis.call('HSET', row, unpack(fields))
local now = now_ms()
redis.call('ZADD', waiting, string.format('%d', now), id)
bus(string.sub(waiting, 1, -8))('event', 'waiting', 'id', id, 'attempt', '0')
return 1

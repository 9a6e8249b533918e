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
--- @include "protocol/form"
--- @include "now_ms"

--- @include "protocol/refuse"
--- @include "wrongtype"
--- @include "positive"
--- @include "count"
--- @include "typed"
--- @include "row_priority"
--- @include "aged_bus"
--- @include "release"

local active, pending, dead, base = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local limit, max, keep = ARGV[1], ARGV[2], ARGV[3]
--- @include "protocol/checks"
local outbox = base .. 'outbox'
if not typed({ active, pending, dead, outbox }, 'zset') then return wrongtype() end

local now = now_ms()
local stamp = string.format('%d', now)
local expired = redis.call('ZRANGE', active, '-inf', '(' .. stamp, 'BYSCORE', 'LIMIT', 0, limit)
local emit, limited = aged_bus(base, now)
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
      local score = row_priority(row)
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

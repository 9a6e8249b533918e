#!lua flags=allow-oom
-- log: an active job appends a line to its log; the row keeps the last 100 lines.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.LOG 2 <active> <base> <id> <token> <line>
-- KEYS[1]  emq:{q}:active     the leased set (read: the membership half of the lease gate)
-- KEYS[2]  emq:{q}:           the queue's base; the row is <base>job:<id>
-- ARGV[1]  <id>               a branded id (gated on its JOB prefix)
-- ARGV[2]  <token>            the lease token (the attempts the claim returned), positive integer
-- ARGV[3]  <line>             any bytes, at most 16 KiB (16384 bytes)
-- Reply:   the line's number n (lines are numbered from 1 over the job's life)
-- Writes:  n = the row's logs (a count, else 0) + 1; HSET <row> logs <n> log:<n> <line>; when
--          n > 100, HDEL <row> log:<n - 100>
-- Errors:  shape, lease token, line, JOB prefix, WRONGTYPE, job not found, job is not active, stale
--          lease token (see docs/protocol.md)
local form = 'EMQ.LOG 2 <active> <base> <id> <token> <line>'
if #KEYS ~= 2 then return redis.error_reply('ERR EMQ.LOG wrong number of keys: ' .. form) end
if #ARGV ~= 3 then return redis.error_reply('ERR EMQ.LOG wrong number of values: ' .. form) end

local KEEP = 100
local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end
local function count(s) return s == '0' or positive(s) end
local function refuse(text) return redis.error_reply('ERR EMQ.LOG ' .. text) end
-- A size bound (docs/protocol.md, "Value grammars"): at most <max> bytes.
local function within(s, max) return #s <= max end

local active, base, id, token, line = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
if not positive(token) then return refuse('lease token must be a positive integer') end
if not within(line, 16384) then return refuse('line must be at most 16384 bytes') end
if string.sub(id, 1, 3) ~= 'JOB' then return refuse('id must start with JOB') end
local t = redis.call('TYPE', active).ok
if t ~= 'zset' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local row = base .. 'job:' .. id
if redis.call('TYPE', row).ok ~= 'hash' then return refuse('job not found') end
local fields = redis.call('HMGET', row, 'state', 'attempts', 'logs')
if fields[1] ~= 'active' or not redis.call('ZSCORE', active, id) then return refuse('job is not active') end
if fields[2] ~= token then return refuse('stale lease token') end

local n = ((fields[3] and count(fields[3])) and tonumber(fields[3]) or 0) + 1
redis.call('HSET', row, 'logs', string.format('%d', n), 'log:' .. string.format('%d', n), line)
if n > KEEP then redis.call('HDEL', row, 'log:' .. string.format('%d', n - KEEP)) end
return n

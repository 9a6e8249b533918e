-- resume: clear the queue's paused flag and wake idle workers.
-- Form:    EMQ.RESUME 1 <meta>
-- KEYS[1]  emq:{q}:meta       the queue's flags (hash)
-- Reply:   1 resumed now | 0 was not paused (nothing written)
-- Wake:    PUBLISH emq:{q}:wake 1 after the write, when the flag was cleared
-- Errors:  shape, WRONGTYPE (see docs/protocol.md)
local form = 'EMQ.RESUME 1 <meta>'
if #KEYS ~= 1 then return redis.error_reply('ERR EMQ.RESUME wrong number of keys: ' .. form) end
if #ARGV ~= 0 then return redis.error_reply('ERR EMQ.RESUME wrong number of values: ' .. form) end

local meta = KEYS[1]
local t = redis.call('TYPE', meta).ok
if t ~= 'hash' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if redis.call('HDEL', meta, 'paused') == 0 then return 0 end
redis.call('PUBLISH', string.sub(meta, 1, -5) .. 'wake', '1')
return 1

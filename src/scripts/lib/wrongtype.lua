-- The server's own WRONGTYPE reply.
local function wrongtype()
  return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

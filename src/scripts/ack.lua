#!lua flags=allow-oom
-- ack: a relayed entry leaves its queue's outbox (the relay's last step, docs/protocol.md "Flows").
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.ACK 1 <outbox> <entry>
-- KEYS[1]  emq:{q}:outbox     the entries a flow's children left for their parents
-- ARGV[1]  <entry>            the entry, byte for byte
-- Reply:   1 removed | 0 not there (relayed before)
-- Errors:  shape, WRONGTYPE
--- @include "protocol/form"
--- @include "typed"
--- @include "wrongtype"
if not typed({ KEYS[1] }, 'zset') then return wrongtype() end
return redis.call('ZREM', KEYS[1], ARGV[1])

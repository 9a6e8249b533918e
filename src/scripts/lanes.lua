#!lua flags=allow-oom
-- lanes: record a lane count of a laned queue; answer every lane count recorded.
-- Memory:  a drain or control (flags=allow-oom): it runs, and writes, over maxmemory
-- Form:    EMQ.LANES 1 <meta> <lanes>
-- KEYS[1]  emq:{q}:meta       the laned queue's own flags (hash), field lanes = counts joined by ','
-- ARGV[1]  <lanes>            an integer from 1 to 10000
-- Reply:   the counts recorded, ascending (integers)
-- Writes:  HSET <meta> lanes <counts> when <lanes> was not among them (tokens that are not
--          counts dropped); nothing otherwise
-- Errors:  shape, lanes, WRONGTYPE (see docs/protocol.md)
--- @include "protocol/form"

--- @include "typed"
--- @include "wrongtype"
--- @include "positive"
-- A lane count: a positive of at most 10000.
local function limit(s) return positive(s) and tonumber(s) <= 10000 end

local meta, lanes = KEYS[1], ARGV[1]
--- @include "protocol/checks"
if not typed({ meta }, 'hash') then return wrongtype() end

local seen, counts = {}, {}
local recorded = redis.call('HGET', meta, 'lanes')
if recorded then
  for token in string.gmatch(recorded, '[^,]+') do
    if limit(token) and not seen[token] then
      seen[token] = true
      table.insert(counts, tonumber(token))
    end
  end
end
if not seen[lanes] then
  table.insert(counts, tonumber(lanes))
  table.sort(counts)
  local text = {}
  for i, n in ipairs(counts) do text[i] = string.format('%d', n) end
  redis.call('HSET', meta, 'lanes', table.concat(text, ','))
  return counts
end
table.sort(counts)
return counts

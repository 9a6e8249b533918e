-- The queue-name rule: 1-255 bytes, no `{`, `}` or control byte.
local function queue(s) return #s >= 1 and #s <= 255 and not string.find(s, '[%z\1-\31\127{}]') end

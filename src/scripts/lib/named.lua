-- A schedule's name: 1-255 bytes without a control byte.
local function named(s) return #s >= 1 and #s <= 255 and string.find(s, '[%z\1-\31\127]') == nil end

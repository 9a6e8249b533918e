-- label: empty (none), or 1-255 bytes without a control byte.
local function label(s) return #s <= 255 and string.find(s, '[%z\1-\31\127]') == nil end

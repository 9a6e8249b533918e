-- positive: 1-15 digits, no sign, no leading zero (docs/protocol.md, "Value grammars").
local function positive(s) return #s <= 15 and string.match(s, '^[1-9]%d*$') ~= nil end

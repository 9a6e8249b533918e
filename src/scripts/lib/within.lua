-- A size bound (docs/protocol.md, "Value grammars"): at most <max> bytes.
local function within(s, max) return #s <= max end

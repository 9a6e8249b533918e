--- @include "positive"
-- count: `0` or a positive (docs/protocol.md, "Value grammars").
local function count(s) return s == '0' or positive(s) end

--- @include "count"
-- priority (an integer): an optional `-` then a count; `-0` refused.
local function integer(s) return count(s) or (string.sub(s, 1, 1) == '-' and positive(string.sub(s, 2))) end

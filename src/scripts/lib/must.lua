--- @include "protocol/refuse"
-- A value refused by its grammar: `<name> must be <rule>`.
local function must(name, rule) return refuse(name .. ' must be ' .. rule) end

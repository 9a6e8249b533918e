-- Appends the field <name> <value> to the list <fields>, unless <value> is <none> (its default).
local function unless(fields, name, value, none)
  if value ~= none then
    table.insert(fields, name)
    table.insert(fields, value)
  end
end

-- The record's fields that describe a schedule, in the order SCHEDULE compares them: the seven
-- every record holds, then job_name and backoff, which an older record may lack (read as empty).
local DESCRIBED = { 'spec', 'payload', 'priority', 'max_attempts', 'timeout', 'limit', 'end_at', 'job_name', 'backoff' }
local HELD = 7
-- Whether <stored> (HMGET of DESCRIBED; false for an absent field) equals <given>, field by field.
local function unchanged(stored, given)
  for i = 1, #DESCRIBED do
    local s = stored[i]
    if i > HELD and not s then s = '' end
    if s ~= given[i] then return false end
  end
  return true
end

-- A completed entry (completed_entry's fields) with the job leased in the settled job's place:
-- next <id> next_attempt <attempts>, from CLAIM's reply { id, payload, attempts, … }; without a
-- leased job, the entry as it was. One entry for both events (COMPLETENEXT, COMPLETEN).
local function with_next(entry, leased)
  if leased then
    table.insert(entry, 'next')
    table.insert(entry, leased[1])
    table.insert(entry, 'next_attempt')
    table.insert(entry, string.format('%d', leased[3]))
  end
  return entry
end

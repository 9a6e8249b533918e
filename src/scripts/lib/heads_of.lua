-- The lowest ids of <pending> taken ahead in one command (ZPOPMIN <n>), for a transition that
-- claims up to <n> times in a row (COMPLETEN): each claim takes the next head here instead of
-- popping its own (lease_next). What was not leased goes back at its own score — all of it
-- before a claim reads <pending> itself (restore), and the rest after the last claim — so at
-- every read, and when the call ends, <pending> is exactly as claims in a row leave it. Once
-- restored, or once all <n> taken ahead are taken, a take pops one head as a lone claim does.
local function heads_of(pending, n)
  local popped = redis.pcall('ZPOPMIN', pending, n)
  local at, restored = 1, false
  local heads = {}
  -- ZPOPMIN's reply for one claim: { id, score }, {} (pending held fewer than <n>: none left)
  -- or the error.
  function heads.take()
    if popped.err then return popped end
    if restored or at > 2 * n then return redis.pcall('ZPOPMIN', pending) end
    if at > #popped then return {} end
    at = at + 2
    return { popped[at - 2], popped[at - 1] }
  end
  function heads.restore()
    if restored then return end
    restored = true
    if popped.err then return end
    for i = at, #popped, 2 do redis.call('ZADD', pending, popped[i + 1], popped[i]) end
  end
  return heads
end

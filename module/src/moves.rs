//! The writes several verbs share: into `pending`, into `done`/`dead` with retention, the wake.
//!
//! Every write goes through [`store::write`] (replicated as the plain command). The caller has
//! passed the write guard.

use valkey_module::Context;

use crate::errors::Refusal;
use crate::keyspace::{Queue, WAKE};
use crate::store;

/// The most ids one call's retention removes.
pub const RETENTION_BATCH: i64 = 10;

/// `ms` as a score / reply text.
pub fn text(ms: i64) -> String {
    ms.to_string()
}

/// `HSET <row> state <state>`
pub fn set_state(ctx: &Context, row: &[u8], state: &[u8]) -> Result<(), Refusal> {
    store::write(ctx, "HSET", &[row, b"state", state]).map(drop)
}

/// `HSET <row> state <state> <field> <value>`
pub fn set_state_with(
    ctx: &Context,
    row: &[u8],
    state: &[u8],
    field: &[u8],
    value: &[u8],
) -> Result<(), Refusal> {
    store::write(ctx, "HSET", &[row, b"state", state, field, value]).map(drop)
}

/// `ZADD <set> <score> <id>`
pub fn add(ctx: &Context, set: &[u8], score: &[u8], id: &[u8]) -> Result<(), Refusal> {
    store::write(ctx, "ZADD", &[set, score, id]).map(drop)
}

/// `ZREM <set> <id>`
pub fn remove(ctx: &Context, set: &[u8], id: &[u8]) -> Result<(), Refusal> {
    store::write(ctx, "ZREM", &[set, id]).map(drop)
}

/// `DEL <key>`
pub fn delete(ctx: &Context, key: &[u8]) -> Result<(), Refusal> {
    store::write(ctx, "DEL", &[key]).map(drop)
}

/// An id that left `active`/`dead` back into `pending`: `HSET <row> state pending` then
/// `ZADD <pending> <priority> <id>`.
pub fn to_pending(
    ctx: &Context,
    row: &[u8],
    pending: &[u8],
    priority: &[u8],
    id: &[u8],
) -> Result<(), Refusal> {
    set_state(ctx, row, b"pending")?;
    add(ctx, pending, priority, id)
}

/// A finished job kept for inspection, or dropped: keep > 0 → `HSET <row> state <state>
/// <field> <value>`, `ZADD <set> <now> <id>`; keep = 0 → `DEL <row>`. Retention is the
/// caller's next step ([`retain`]), once per call.
pub fn finish(
    ctx: &Context,
    row: &[u8],
    set: &[u8],
    id: &[u8],
    (state, field, value): (&[u8], &[u8], &[u8]),
    keep: i64,
    now: i64,
) -> Result<(), Refusal> {
    if keep == 0 {
        return delete(ctx, row);
    }
    set_state_with(ctx, row, state, field, value)?;
    add(ctx, set, text(now).as_bytes(), id)
}

/// How many ids retention removes from a set of `card` ids that keeps `keep`.
pub fn excess(card: i64, keep: i64) -> i64 {
    (card - keep).clamp(0, RETENTION_BATCH)
}

/// Retention: while `set` holds more than `keep` ids, the oldest (lowest score, ties by id) are
/// removed and their rows deleted, at most [`RETENTION_BATCH`] per call. `keep` = 0 trims
/// nothing (the job's row was deleted at once).
pub fn retain(ctx: &Context, queue: &Queue, set: &[u8], keep: i64) -> Result<(), Refusal> {
    if keep == 0 {
        return Ok(());
    }
    let card = store::integer(&store::read(ctx, "ZCARD", &[set])?).unwrap_or(0);
    let n = excess(card, keep);
    if n == 0 {
        return Ok(());
    }
    let last = text(n - 1);
    let oldest = store::read(ctx, "ZRANGE", &[set, b"0", last.as_bytes()])?;
    for id in store::elements(&oldest).into_iter().flatten() {
        remove(ctx, set, &id)?;
        delete(ctx, &queue.job(&id))?;
    }
    Ok(())
}

/// Wake: `PUBLISH emq:{q}:wake 1`, replicated like the script's `PUBLISH`.
pub fn wake(ctx: &Context, queue: &Queue) -> Result<(), Refusal> {
    store::write(ctx, "PUBLISH", &[&queue.key(WAKE), b"1"]).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_is_bounded() {
        assert_eq!(excess(0, 5), 0);
        assert_eq!(excess(5, 5), 0);
        assert_eq!(excess(6, 5), 1);
        assert_eq!(excess(15, 5), 10);
        assert_eq!(excess(1000, 1), 10);
        assert_eq!(excess(3, 10), 0);
    }
}

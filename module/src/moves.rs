//! The writes several verbs share: into `pending`, into `done`/`dead` with retention, the wake.
//!
//! Every write goes through [`Db`]'s writes (each replicated as its plain command). The caller
//! has passed the write guard.

use crate::direct::Db;
use crate::errors::Refusal;
use crate::keyspace::{Queue, WAKE};

/// The most ids one call's retention removes.
pub const RETENTION_BATCH: i64 = 10;

/// `HSET <row> state <state>`
pub fn set_state(db: &mut Db, row: &[u8], state: &[u8]) -> Result<(), Refusal> {
    db.hset(row, &[(b"state", state)])
}

/// `HSET <row> state <state> <field> <value>`
pub fn set_state_with(
    db: &mut Db,
    row: &[u8],
    state: &[u8],
    field: &[u8],
    value: &[u8],
) -> Result<(), Refusal> {
    db.hset(row, &[(b"state", state), (field, value)])
}

/// `ZADD <set> <score> <id>`
pub fn add(db: &mut Db, set: &[u8], score: i64, id: &[u8]) -> Result<(), Refusal> {
    db.zadd(set, score, id).map(drop)
}

/// `ZREM <set> <id>`
pub fn remove(db: &mut Db, set: &[u8], id: &[u8]) -> Result<(), Refusal> {
    db.zrem(set, id).map(drop)
}

/// `DEL <key>`
pub fn delete(db: &mut Db, key: &[u8]) -> Result<(), Refusal> {
    db.del(key).map(drop)
}

/// An id that left `active`/`dead` back into `pending`: `HSET <row> state pending` then
/// `ZADD <pending> <priority> <id>`.
pub fn to_pending(
    db: &mut Db,
    row: &[u8],
    pending: &[u8],
    priority: i64,
    id: &[u8],
) -> Result<(), Refusal> {
    set_state(db, row, b"pending")?;
    add(db, pending, priority, id)
}

/// A finished job kept for inspection, or dropped: keep > 0 → `HSET <row> state <state>
/// <field> <value>`, `ZADD <set> <now> <id>`; keep = 0 → `DEL <row>`. Retention is the
/// caller's next step ([`retain`]), once per call.
pub fn finish(
    db: &mut Db,
    row: &[u8],
    set: &[u8],
    id: &[u8],
    (state, field, value): (&[u8], &[u8], &[u8]),
    keep: i64,
    now: i64,
) -> Result<(), Refusal> {
    if keep == 0 {
        return delete(db, row);
    }
    set_state_with(db, row, state, field, value)?;
    add(db, set, now, id)
}

/// How many ids retention removes from a set of `card` ids that keeps `keep`.
pub fn excess(card: i64, keep: i64) -> i64 {
    (card - keep).clamp(0, RETENTION_BATCH)
}

/// Retention: while `set` holds more than `keep` ids, the oldest (lowest score, ties by id) are
/// removed and their rows deleted, at most [`RETENTION_BATCH`] per call. `keep` = 0 trims
/// nothing (the job's row was deleted at once).
pub fn retain(db: &mut Db, queue: &Queue, set: &[u8], keep: i64) -> Result<(), Refusal> {
    if keep == 0 {
        return Ok(());
    }
    let oldest = {
        let key = db.read(set);
        let n = excess(key.card()?, keep);
        if n == 0 {
            return Ok(());
        }
        key.first(n as usize)?
    };
    for id in oldest {
        remove(db, set, &id)?;
        delete(db, &queue.job(&id))?;
    }
    Ok(())
}

/// Wake: `PUBLISH emq:{q}:wake 1`, replicated like the script's `PUBLISH`.
pub fn wake(db: &mut Db, queue: &Queue) {
    db.publish(&queue.key(WAKE), b"1");
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

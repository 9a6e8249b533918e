//! The writes several verbs share: into `pending`, into `done`/`dead` with retention, the wake
//! (and the signal to the clients waiting for a job).
//!
//! Every write goes through an open [`Key`] (each replicated as its plain command). The caller
//! has passed the write guard.

use crate::direct::{Db, Key};
use crate::errors::Refusal;
use crate::keyspace::{Queue, PENDING, WAKE};

/// The most ids one call's retention removes.
pub const RETENTION_BATCH: i64 = 10;

/// `HSET <row> state <state>`
pub fn set_state(row: &mut Key, state: &[u8]) -> Result<(), Refusal> {
    row.hset(&[(b"state", state)])
}

/// `HSET <row> state <state> <field> <value>`
pub fn set_state_with(
    row: &mut Key,
    state: &[u8],
    field: &[u8],
    value: &[u8],
) -> Result<(), Refusal> {
    row.hset(&[(b"state", state), (field, value)])
}

/// `ZADD <set> <score> <id>`
pub fn add(set: &mut Key, score: i64, id: &[u8]) -> Result<(), Refusal> {
    set.zadd(score, id).map(drop)
}

/// `ZREM <set> <id>`
pub fn remove(set: &mut Key, id: &[u8]) -> Result<(), Refusal> {
    set.zrem(id).map(drop)
}

/// An id that left `active`/`dead` back into `pending`: `HSET <row> state pending` then
/// `ZADD <pending> <priority> <id>`.
pub fn to_pending(
    row: &mut Key,
    pending: &mut Key,
    priority: i64,
    id: &[u8],
) -> Result<(), Refusal> {
    set_state(row, b"pending")?;
    add(pending, priority, id)
}

/// A finished job kept for inspection, or dropped: keep > 0 → `HSET <row> state <state>
/// <field> <value>`, `ZADD <set> <now> <id>`; keep = 0 → `DEL <row>`. Retention is the
/// caller's next step ([`retain`]), once per call, after the row is closed.
pub fn finish(
    row: &mut Key,
    set: &mut Key,
    id: &[u8],
    (state, field, value): (&[u8], &[u8], &[u8]),
    keep: i64,
    now: i64,
) -> Result<(), Refusal> {
    if keep == 0 {
        return row.delete().map(drop);
    }
    set_state_with(row, state, field, value)?;
    add(set, now, id)
}

/// How many ids retention removes from a set of `card` ids that keeps `keep`.
pub fn excess(card: i64, keep: i64) -> i64 {
    (card - keep).clamp(0, RETENTION_BATCH)
}

/// Retention: while `set` holds more than `keep` ids, the oldest (lowest score, ties by id) are
/// removed and their rows deleted (`ZREM <set> <id>`, `DEL <row>`), at most
/// [`RETENTION_BATCH`] per call. `keep` = 0 trims nothing (the job's row was deleted at once).
/// No row of the queue may be open.
pub fn retain(db: &Db, queue: &Queue, set: &mut Key, keep: i64) -> Result<(), Refusal> {
    if keep == 0 {
        return Ok(());
    }
    let n = excess(set.card()?, keep);
    if n == 0 {
        return Ok(());
    }
    for id in set.first(n as usize)? {
        remove(set, &id)?;
        db.del(&queue.job(&id))?;
    }
    Ok(())
}

/// Wake: `SPUBLISH emq:{q}:wake <ready>` — `ready` (> 0) being how many ids the call put into
/// `pending` — on the queue's shard channel, replicated like the script's `SPUBLISH`. One
/// message per call. And `pending` is signalled ready: the clients waiting in `EMQ.BCLAIM` try
/// their claim again after this command.
pub fn wake(db: &Db, queue: &Queue, ready: i64) {
    debug_assert!(ready > 0, "a wake names at least one ready id");
    let text = ready.to_string();
    db.spublish(&queue.key(WAKE), text.as_bytes());
    db.signal_ready(&queue.key(PENDING));
}

/// Wake `0`: an id entered `schedule` (due later, no id ready now); a worker's promoter, asleep
/// until the due time it knew, looks at the schedule's head again. One message per call.
pub fn wake_scheduled(db: &Db, queue: &Queue) {
    db.spublish(&queue.key(WAKE), b"0");
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

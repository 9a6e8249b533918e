//! The timers' work on one queue, through the same code as the verbs: its due time read from
//! the heads of its sets, and one bounded step — [`promote_due`] and [`reap_expired`], the
//! functions `EMQ.PROMOTE` and `EMQ.REAP` run — with the reaping's bounds from the queue's
//! `meta`.

use valkey_module::Context;

use crate::bus;
use crate::clock;
use crate::direct::{self, Db, Key};
use crate::errors::Refusal;
use crate::fence;
use crate::keyspace::{Queue, ACTIVE, DEAD, PENDING, SCHEDULE};
use crate::verbs::timers::{promote_due, reap_expired, Reaping};

use super::index::{due_of, QueueId};

/// The `meta` fields that hold the server reaper's bounds (written by a worker that leaves
/// its housekeeping to the module): a row without its own `max_attempts` is dead after
/// `max_attempts` attempts; `keep_dead` dead jobs are kept.
pub const MAX_ATTEMPTS_FIELD: &[u8] = b"max_attempts";
pub const KEEP_DEAD_FIELD: &[u8] = b"keep_dead";
/// The bounds of a queue whose `meta` has none: the worker's defaults.
pub const DEFAULT_MAX_ATTEMPTS: i64 = 3;
pub const DEFAULT_KEEP_DEAD: i64 = 10_000;

/// What one step moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    pub promoted: i64,
    pub requeued: i64,
    pub buried: i64,
}

/// The first score of an open sorted set (`ZRANGE <key> 0 0 WITHSCORES`), as an integer ms.
fn head(set: &Key) -> Result<Option<i64>, Refusal> {
    let Some(first) = set.first(1)?.pop() else {
        return Ok(None);
    };
    Ok(set.score(&first)?.map(|score| score as i64))
}

/// The queue's due time from its sets' heads (read-only).
fn due(db: &Db, queue: &Queue) -> Result<Option<i64>, Refusal> {
    let schedule = head(&db.read(&queue.key(SCHEDULE)))?;
    let active = head(&db.read(&queue.key(ACTIVE)))?;
    Ok(due_of(schedule, active))
}

/// The queue `id` names, with its database selected in `ctx`.
fn select<'q>(ctx: &Context, id: &'q QueueId) -> Option<Queue<'q>> {
    (direct::select_db(ctx, id.0)).then_some(())?;
    Queue::named(&id.1)
}

/// The due time of queue `id`, read from its heads; `None` (forget it) when both sets are empty
/// or a key holds another type.
pub fn heads(ctx: &Context, id: &QueueId) -> Option<i64> {
    let queue = select(ctx, id)?;
    let db = Db::housekeeping(ctx);
    due(&db, &queue).ok().flatten()
}

/// One step on a due queue: the fence (the verbs' rule, read by the module itself), then at most `limit` ids
/// promoted and at most `limit` expired leases reaped, exactly as `EMQ.PROMOTE` and `EMQ.REAP`
/// with that limit would; then the queue's due time. `Err`: the queue cannot be worked on (the
/// node is not branded for wire 6, a key of another type); the caller forgets it.
pub fn step(ctx: &Context, id: &QueueId, limit: i64) -> Result<(Moved, Option<i64>), Refusal> {
    let Some(queue) = select(ctx, id) else {
        return Ok((Moved::default(), None));
    };
    fence::check_node(ctx)?;
    let db = Db::housekeeping(ctx);
    let now = clock::now_ms();
    let (schedule, active) = (queue.key(SCHEDULE), queue.key(ACTIVE));
    let (pending, dead) = (queue.key(PENDING), queue.key(DEAD));
    let mut moved = Moved::default();
    let due_schedule = head(&db.read(&schedule))?.is_some_and(|at| at <= now);
    let due_active = head(&db.read(&active))?.is_some_and(|deadline| deadline < now);
    if due_schedule {
        moved.promoted = promote_due(&db, &queue, [&schedule[..], &pending[..]], limit, Ok(()))?;
    }
    if due_active {
        let bounds = reaping(&db, &queue, limit);
        let (back, buried) = reap_expired(
            &db,
            &queue,
            [&active[..], &pending[..], &dead[..]],
            bounds,
            Ok(()),
        )?;
        moved.requeued = back.len() as i64;
        moved.buried = buried.len() as i64;
    }
    Ok((moved, due(&db, &queue)?))
}

/// The reaping's bounds: `limit` ids, the attempt budget and the dead kept from the queue's
/// `meta` (each a *count*, else the default; a budget of 0 reads as the default).
fn reaping(db: &Db, queue: &Queue, limit: i64) -> Reaping {
    let [max_attempts, keep] = db
        .read(&queue.meta())
        .hash_get([MAX_ATTEMPTS_FIELD, KEEP_DEAD_FIELD])
        .unwrap_or_default();
    bounds(max_attempts.as_deref(), keep.as_deref(), limit)
}

/// The reaping's bounds from the stored `max_attempts` and `keep_dead`.
fn bounds(max_attempts: Option<&[u8]>, keep: Option<&[u8]>, limit: i64) -> Reaping {
    Reaping {
        limit,
        max_attempts: match bus::setting(max_attempts, DEFAULT_MAX_ATTEMPTS) {
            0 => DEFAULT_MAX_ATTEMPTS,
            n => n,
        },
        keep: bus::setting(keep, DEFAULT_KEEP_DEAD),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_from_meta_else_the_defaults() {
        let b = |m: Option<&[u8]>, k: Option<&[u8]>| {
            let r = bounds(m, k, 32);
            (r.max_attempts, r.keep)
        };
        assert_eq!(b(None, None), (3, 10_000));
        assert_eq!(
            b(Some(b"5"), Some(b"0")),
            (5, 0),
            "keep 0: dead rows deleted at once"
        );
        assert_eq!(b(Some(b"0"), None), (3, 10_000), "no budget of 0 attempts");
        assert_eq!(b(Some(b"-1"), Some(b"x")), (3, 10_000));
        assert_eq!(bounds(None, None, 32).limit, 32);
    }
}

//! The timer verbs: `EMQ.PROMOTE` (due ids `schedule` → `pending`) and `EMQ.REAP` (expired
//! leases `active` → `pending` or `dead`).
//!
//! Bounded work: each reads at most `limit` ids per call; retention trims at most 10. Reads
//! (picks and rows) come before the write guard; then the writes: the event bus's age trim
//! (once per call, whether or not an id moves), then id by id, each with its entries.

use valkey_module::{Context, ValkeyValue};

use crate::bus::Bus;
use crate::clock;
use crate::direct::{Args, Db, Key, Kind};
use crate::errors::{Refusal, Reply};
use crate::gates::{self, Fields, Row};
use crate::guard;
use crate::keyspace::{is_job_id, KeyBuf, Queue, OUTBOX};
use crate::limits;
use crate::moves;
use crate::open::{argv, open};
use crate::outbox::{self, FAILED};
use crate::protocol::{promote, reap};

/// The error a reaped job that goes dead carries.
pub const LEASE_EXPIRED: &[u8] = b"lease expired";

/// `ZRANGE <set> -inf <now> BYSCORE LIMIT 0 <limit>` (`PROMOTE`: due at or before now), or with
/// `(<now>` (`inclusive` false, `REAP`: strictly before now): at most `limit` ids, oldest first.
fn pick(set: &Key, now: i64, inclusive: bool, limit: i64) -> Result<Vec<Vec<u8>>, Refusal> {
    set.range(f64::NEG_INFINITY, now as f64, !inclusive, limit as usize)
}

/// A picked id's row: its key and fields when it is a `JOB` id with a hash row; `None` for an
/// orphan. The row is read and closed (it is opened again for its writes).
fn job_row(db: &Db, queue: &Queue, id: &[u8]) -> Result<Option<(KeyBuf, Row)>, Refusal> {
    if !is_job_id(id) {
        return Ok(None);
    }
    let key = queue.job(id);
    let row = {
        let row = db.read(&key);
        if row.kind() != Kind::Hash {
            return Ok(None);
        }
        Row::read(&row, Fields::All)?
    };
    Ok(Some((key, row)))
}

/// `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>` → the number of ids moved to `pending`.
pub fn promote(ctx: &Context, args: Args) -> Reply {
    use promote::{FORM, LIMIT, PENDING, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let limit = LIMIT.read(&call)?;
    let keys = [SCHEDULE.of(&call), PENDING.of(&call)];
    let moved = promote_due(&db, &queue, keys, limit, guard)?;
    Ok(ValkeyValue::Integer(moved))
}

/// The promotion both `EMQ.PROMOTE` and the module's own timers ([`crate::ticker`]) run on one
/// queue: type gate on `[schedule, pending]`, at most `limit` ids due at the cached clock read
/// with their rows, then — when `guard` passed — the bus's age trim and the moves, each id with
/// its `promoted` entry, and one wake. → the number of ids moved to `pending`.
pub fn promote_due(
    db: &Db,
    queue: &Queue,
    [schedule, pending]: [&[u8]; 2],
    limit: i64,
    guard: Result<(), Refusal>,
) -> Result<i64, Refusal> {
    let [mut schedule, mut pending] = gates::sorted_sets(db, [schedule, pending])?;

    let now = clock::now_ms();
    let due = pick(&schedule, now, true, limit)?;
    let mut plan = Vec::with_capacity(due.len());
    for id in due {
        let row = job_row(db, queue, &id)?;
        plan.push((id, row));
    }
    let mut bus = Bus::housekeeping(db, queue, now);
    if plan.is_empty() && !bus.stale() {
        return Ok(0);
    }

    guard?;
    bus.trim()?;
    let mut moved = 0;
    for (id, row) in &plan {
        moves::remove(&mut schedule, id)?;
        if let Some((key, fields)) = row {
            moves::to_pending(&mut db.open(key), &mut pending, fields.priority(), id)?;
            bus.job(
                b"promoted",
                id,
                fields.attempts().to_string().as_bytes(),
                None,
            )?;
            moved += 1;
        }
    }
    if moved > 0 {
        moves::wake(db, queue, moved);
    }
    Ok(moved)
}

/// `EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>` →
/// `[[<ids back in pending>…], [<ids dead>…]]`.
pub fn reap(ctx: &Context, args: Args) -> Reply {
    use reap::{ACTIVE, DEAD, FORM, KEEP, LIMIT, MAX_ATTEMPTS, PENDING};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let bounds = Reaping {
        limit: LIMIT.read(&call)?,
        max_attempts: MAX_ATTEMPTS.read(&call)?,
        keep: KEEP.read(&call)?,
    };
    let keys = [ACTIVE.of(&call), PENDING.of(&call), DEAD.of(&call)];
    let (back, buried) = reap_expired(&db, &queue, keys, bounds, guard)?;
    Ok(reaped(back, buried))
}

/// What one reaping is given: ids per call, the attempt budget of a row without its own, and
/// how many dead jobs retention keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaping {
    pub limit: i64,
    pub max_attempts: i64,
    pub keep: i64,
}

/// What a reaping moved: the ids back in `pending`, the ids now dead.
pub type Reaped = (Vec<Vec<u8>>, Vec<Vec<u8>>);

/// The reaping both `EMQ.REAP` and the module's own timers ([`crate::ticker`]) run on one queue:
/// type gate on `[active, pending, dead]`, at most `limit` leases expired before the cached
/// clock read with their rows, then — when `guard` passed — the bus's age trim and the moves
/// (`stalled`, then back to `pending` or `dead` with its entry, and a flow child's outbox entry
/// — [`crate::outbox`] — in `<base>outbox`, type-gated with the sets), retention, one wake. →
/// `(ids back in pending, ids dead)`.
pub fn reap_expired(
    db: &Db,
    queue: &Queue,
    [active, pending, dead]: [&[u8]; 3],
    Reaping {
        limit,
        max_attempts,
        keep,
    }: Reaping,
    guard: Result<(), Refusal>,
) -> Result<Reaped, Refusal> {
    let outbox = queue.key(OUTBOX);
    let [mut active, mut pending, mut dead, mut outbox] =
        gates::sorted_sets(db, [active, pending, dead, &outbox])?;

    let now = clock::now_ms();
    let expired = pick(&active, now, false, limit)?;
    let mut plan = Vec::with_capacity(expired.len());
    for id in expired {
        let row = job_row(db, queue, &id)?;
        plan.push((id, row));
    }
    let (mut back, mut buried) = (Vec::new(), Vec::new());
    let mut bus = Bus::housekeeping(db, queue, now);
    if plan.is_empty() && !bus.stale() {
        return Ok((back, buried));
    }

    guard?;
    bus.trim()?;
    let left = plan.len() as i64;
    let mut groups = Vec::new();
    for (id, row) in plan {
        moves::remove(&mut active, &id)?;
        let Some((key, fields)) = row else { continue };
        groups.extend(fields.groups());
        let mut row = db.open(&key);
        let attempt = fields.attempts().to_string();
        bus.job(b"stalled", &id, attempt.as_bytes(), None)?;
        if fields.exhausted(max_attempts) {
            bus.job(
                b"dead",
                &id,
                attempt.as_bytes(),
                Some((b"reason", LEASE_EXPIRED)),
            )?;
            let [parent] = row.hash_get([b"parent"])?;
            let settled = (&id[..], FAILED, LEASE_EXPIRED);
            outbox::post(&mut outbox, now, parent.as_deref(), settled)?;
            let error = (&b"dead"[..], &b"error"[..], LEASE_EXPIRED);
            moves::finish(&mut row, &mut dead, &id, error, keep, now)?;
            buried.push(id);
        } else {
            moves::to_pending(&mut row, &mut pending, fields.priority(), &id)?;
            back.push(id);
        }
    }
    if !buried.is_empty() {
        moves::retain(db, queue, &mut dead, keep)?;
    }
    limits::release(db, queue, Some(&mut pending), &groups, left);
    if !back.is_empty() {
        moves::wake(db, queue, back.len() as i64);
    }
    Ok((back, buried))
}

/// The reply of `REAP`: two arrays of bulk strings.
fn reaped(back: Vec<Vec<u8>>, dead: Vec<Vec<u8>>) -> ValkeyValue {
    let list = |ids: Vec<Vec<u8>>| {
        ValkeyValue::Array(ids.into_iter().map(ValkeyValue::StringBuffer).collect())
    };
    ValkeyValue::Array(vec![list(back), list(dead)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reap_reply_shape() {
        let reply = reaped(vec![b"JOBa".to_vec()], vec![]);
        assert_eq!(
            reply,
            ValkeyValue::Array(vec![
                ValkeyValue::Array(vec![ValkeyValue::StringBuffer(b"JOBa".to_vec())]),
                ValkeyValue::Array(vec![]),
            ])
        );
    }
}

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
use crate::keyspace::{is_job_id, KeyBuf, Queue};
use crate::moves;
use crate::open::{argv, open};
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
    let (schedule, pending) = (SCHEDULE.of(&call), PENDING.of(&call));

    let limit = LIMIT.read(&call)?;
    let [mut schedule, mut pending] = gates::sorted_sets(&db, [schedule, pending])?;

    let now = clock::now_ms();
    let due = pick(&schedule, now, true, limit)?;
    let mut plan = Vec::with_capacity(due.len());
    for id in due {
        let row = job_row(&db, &queue, &id)?;
        plan.push((id, row));
    }
    let mut bus = Bus::housekeeping(&db, &queue, now);
    if plan.is_empty() && !bus.stale() {
        return Ok(ValkeyValue::Integer(0));
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
        moves::wake(&db, &queue, moved);
    }
    Ok(ValkeyValue::Integer(moved))
}

/// `EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>` →
/// `[[<ids back in pending>…], [<ids dead>…]]`.
pub fn reap(ctx: &Context, args: Args) -> Reply {
    use reap::{ACTIVE, DEAD, FORM, KEEP, LIMIT, MAX_ATTEMPTS, PENDING};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, pending, dead) = (ACTIVE.of(&call), PENDING.of(&call), DEAD.of(&call));

    let limit = LIMIT.read(&call)?;
    let max_attempts = MAX_ATTEMPTS.read(&call)?;
    let keep = KEEP.read(&call)?;
    let [mut active, mut pending, mut dead] = gates::sorted_sets(&db, [active, pending, dead])?;

    let now = clock::now_ms();
    let expired = pick(&active, now, false, limit)?;
    let mut plan = Vec::with_capacity(expired.len());
    for id in expired {
        let row = job_row(&db, &queue, &id)?;
        plan.push((id, row));
    }
    let (mut back, mut buried) = (Vec::new(), Vec::new());
    let mut bus = Bus::housekeeping(&db, &queue, now);
    if plan.is_empty() && !bus.stale() {
        return Ok(reaped(back, buried));
    }

    guard?;
    bus.trim()?;
    for (id, row) in plan {
        moves::remove(&mut active, &id)?;
        let Some((key, fields)) = row else { continue };
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
            let error = (&b"dead"[..], &b"error"[..], LEASE_EXPIRED);
            moves::finish(&mut row, &mut dead, &id, error, keep, now)?;
            buried.push(id);
        } else {
            moves::to_pending(&mut row, &mut pending, fields.priority(), &id)?;
            back.push(id);
        }
    }
    if !buried.is_empty() {
        moves::retain(&db, &queue, &mut dead, keep)?;
    }
    if !back.is_empty() {
        moves::wake(&db, &queue, back.len() as i64);
    }
    Ok(reaped(back, buried))
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

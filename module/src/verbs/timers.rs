//! The timer verbs: `EMQ.PROMOTE` (due ids `schedule` → `pending`) and `EMQ.REAP` (expired
//! leases `active` → `pending` or `dead`).
//!
//! Bounded work: each reads at most `limit` ids per call; retention trims at most 10. Reads
//! (picks and rows) come before the write guard; then the writes, id by id.

use valkey_module::{Context, ValkeyString, ValkeyValue};

use crate::clock;
use crate::errors::{Refusal, Reply};
use crate::gates::{self, Row};
use crate::guard;
use crate::keyspace::{is_job_id, Queue, ACTIVE, BASE, DEAD, PENDING, SCHEDULE};
use crate::moves;
use crate::shape::{Form, Slot};
use crate::store::{self, Kind};
use crate::values::{value, Grammar};
use crate::verbs::{argv, open};

pub const PROMOTE: Form = Form {
    verb: "PROMOTE",
    syntax: "EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>",
    keys: &[Slot::Key(SCHEDULE), Slot::Key(PENDING), Slot::Key(BASE)],
    anchor: 0,
    values: 1,
};

pub const REAP: Form = Form {
    verb: "REAP",
    syntax: "EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>",
    keys: &[
        Slot::Key(ACTIVE),
        Slot::Key(PENDING),
        Slot::Key(DEAD),
        Slot::Key(BASE),
    ],
    anchor: 0,
    values: 3,
};

/// This family's forms.
pub const FORMS: [Form; 2] = [PROMOTE, REAP];

/// The error a reaped job that goes dead carries.
pub const LEASE_EXPIRED: &[u8] = b"lease expired";

/// The score bounds of a pick: due at or before now (`PROMOTE`), or strictly before now (`REAP`).
pub fn bounds(now: i64, inclusive: bool) -> (String, String) {
    let max = if inclusive {
        now.to_string()
    } else {
        format!("({now}")
    };
    ("-inf".to_owned(), max)
}

/// `ZRANGE <set> <min> <max> BYSCORE LIMIT 0 <limit>`: at most `limit` ids, oldest first.
fn pick(
    ctx: &Context,
    set: &[u8],
    (min, max): (String, String),
    limit: &[u8],
) -> Result<Vec<Vec<u8>>, Refusal> {
    let args: [&[u8]; 7] = [
        set,
        min.as_bytes(),
        max.as_bytes(),
        b"BYSCORE",
        b"LIMIT",
        b"0",
        limit,
    ];
    let ids = store::read(ctx, "ZRANGE", &args)?;
    Ok(store::elements(&ids).into_iter().flatten().collect())
}

/// A picked id's row: its fields when it is a `JOB` id with a hash row; `None` for an orphan.
fn job_row(ctx: &Context, queue: &Queue, id: &[u8]) -> Result<Option<(Vec<u8>, Row)>, Refusal> {
    if !is_job_id(id) {
        return Ok(None);
    }
    let key = queue.job(id);
    if store::kind(ctx, &key)? != Kind::Hash {
        return Ok(None);
    }
    let row = Row::read(ctx, &key)?;
    Ok(Some((key, row)))
}

/// `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>` → the number of ids moved to `pending`.
pub fn promote(ctx: &Context, args: &[ValkeyString]) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &PROMOTE, &argv)?;
    let (schedule, pending) = (call.keys[0], call.keys[1]);

    value(&PROMOTE, "limit", Grammar::Limit, call.values[0])?;
    gates::sorted_sets(ctx, &[schedule, pending])?;

    let due = pick(ctx, schedule, bounds(clock::now_ms(), true), call.values[0])?;
    let mut plan = Vec::with_capacity(due.len());
    for id in due {
        let row = job_row(ctx, &queue, &id)?;
        plan.push((id, row));
    }
    if plan.is_empty() {
        return Ok(ValkeyValue::Integer(0));
    }

    guard::writable(ctx)?;
    let mut moved = 0;
    for (id, row) in &plan {
        moves::remove(ctx, schedule, id)?;
        if let Some((key, fields)) = row {
            moves::to_pending(ctx, key, pending, fields.priority(), id)?;
            moved += 1;
        }
    }
    if moved > 0 {
        moves::wake(ctx, &queue)?;
    }
    Ok(ValkeyValue::Integer(moved))
}

/// `EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>` →
/// `[[<ids back in pending>…], [<ids dead>…]]`.
pub fn reap(ctx: &Context, args: &[ValkeyString]) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &REAP, &argv)?;
    let (active, pending, dead) = (call.keys[0], call.keys[1], call.keys[2]);

    value(&REAP, "limit", Grammar::Limit, call.values[0])?;
    let max_attempts = value(&REAP, "max attempts", Grammar::Positive, call.values[1])?;
    let keep = value(&REAP, "keep", Grammar::Count, call.values[2])?;
    gates::sorted_sets(ctx, &[active, pending, dead])?;

    let now = clock::now_ms();
    let expired = pick(ctx, active, bounds(now, false), call.values[0])?;
    let mut plan = Vec::with_capacity(expired.len());
    for id in expired {
        let row = job_row(ctx, &queue, &id)?;
        plan.push((id, row));
    }
    let (mut back, mut buried) = (Vec::new(), Vec::new());
    if plan.is_empty() {
        return Ok(reaped(back, buried));
    }

    guard::writable(ctx)?;
    for (id, row) in plan {
        moves::remove(ctx, active, &id)?;
        let Some((key, fields)) = row else { continue };
        if fields.exhausted(max_attempts) {
            let error = (&b"dead"[..], &b"error"[..], LEASE_EXPIRED);
            moves::finish(ctx, &key, dead, &id, error, keep, now)?;
            buried.push(id);
        } else {
            moves::to_pending(ctx, &key, pending, fields.priority(), &id)?;
            back.push(id);
        }
    }
    if !buried.is_empty() {
        moves::retain(ctx, &queue, dead, keep)?;
    }
    if !back.is_empty() {
        moves::wake(ctx, &queue)?;
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
    fn pick_bounds() {
        assert_eq!(bounds(1700, true), ("-inf".to_owned(), "1700".to_owned()));
        assert_eq!(bounds(1700, false), ("-inf".to_owned(), "(1700".to_owned()));
    }

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

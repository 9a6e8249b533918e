//! A leased job's own verbs: `EMQ.EXTEND`, `EMQ.COMPLETE`, `EMQ.FAIL`, `EMQ.RESCHEDULE`,
//! `EMQ.REQUEUE`.
//!
//! Each presents the lease token its claim returned. Steps: shape → layout → fence → values →
//! id gate → type gate → row gate → lease gate → write guard → writes.

use valkey_module::{Context, ValkeyValue};

use crate::clock;
use crate::direct::{Args, Db, Key, When, Zadd};
use crate::errors::{Refusal, Reply};
use crate::gates::{self, Fields, Row};
use crate::guard;
use crate::keyspace::{Queue, ACTIVE, BASE, DEAD, DONE, PENDING, SCHEDULE};
use crate::moves;
use crate::shape::{Class, Form, Slot};
use crate::values::{value, Grammar};
use crate::verbs::{argv, open};

pub const EXTEND: Form = Form {
    verb: "EXTEND",
    syntax: "EMQ.EXTEND 2 <active> <base> <id> <token> <lease_ms>",
    keys: &[Slot::Key(ACTIVE), Slot::Key(BASE)],
    anchor: 0,
    values: 3,
    class: Class::Drain,
};

pub const COMPLETE: Form = Form {
    verb: "COMPLETE",
    syntax: "EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>",
    keys: &[Slot::Key(ACTIVE), Slot::Key(DONE), Slot::Key(BASE)],
    anchor: 0,
    values: 4,
    class: Class::Drain,
};

pub const FAIL: Form = Form {
    verb: "FAIL",
    syntax: "EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep>",
    keys: &[
        Slot::Key(ACTIVE),
        Slot::Key(PENDING),
        Slot::Key(SCHEDULE),
        Slot::Key(DEAD),
        Slot::Key(BASE),
    ],
    anchor: 0,
    values: 6,
    class: Class::Drain,
};

pub const RESCHEDULE: Form = Form {
    verb: "RESCHEDULE",
    syntax: "EMQ.RESCHEDULE 3 <active> <schedule> <base> <id> <token> <delay>",
    keys: &[Slot::Key(ACTIVE), Slot::Key(SCHEDULE), Slot::Key(BASE)],
    anchor: 0,
    values: 3,
    class: Class::Drain,
};

pub const REQUEUE: Form = Form {
    verb: "REQUEUE",
    syntax: "EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>",
    keys: &[Slot::Key(ACTIVE), Slot::Key(PENDING), Slot::Key(BASE)],
    anchor: 0,
    values: 3,
    class: Class::Drain,
};

/// This family's forms.
pub const FORMS: [Form; 5] = [EXTEND, COMPLETE, FAIL, RESCHEDULE, REQUEUE];

/// The lease token value (the second value of every verb here).
fn token(form: &Form, text: &[u8]) -> Result<i64, Refusal> {
    value(form, "lease token", Grammar::Positive, text)
}

/// A leased job's keys, open: its sets (`active` first) and its row, with the row's fields.
struct Leased<'d, const N: usize> {
    sets: [Key<'d>; N],
    row: Key<'d>,
    fields: Row,
}

/// The gates of a leased job: id gate, type gate on `sets` (`active` first), row gate (reading
/// `fields`), lease gate.
fn leased<'d, const N: usize>(
    db: &'d Db,
    form: &Form,
    queue: &Queue,
    sets: [&[u8]; N],
    id: &[u8],
    (token, fields): (&[u8], Fields),
) -> Result<Leased<'d, N>, Refusal> {
    gates::job_id(form, id)?;
    let sets = gates::sorted_sets(db, sets)?;
    let (row, fields) = gates::row(db, form, &queue.job(id), fields)?;
    gates::lease(form, &sets[0], id, &fields, token)?;
    Ok(Leased { sets, row, fields })
}

/// The write guard, then the job's first write: `ZREM <active> <id>`, whose count decides the
/// membership half of the lease gate (nothing written when the id is not a member). A guard
/// refusal asks membership first, so "job is not active" keeps its place.
fn leave_active(
    form: &Form,
    guard: Result<(), Refusal>,
    active: &mut Key,
    id: &[u8],
) -> Result<(), Refusal> {
    guard.map_err(|r| gates::unless_gone(form, active, id, r))?;
    gates::not_active(form, active.zrem(id)?)
}

/// `EMQ.EXTEND 2 <active> <base> <id> <token> <lease_ms>` → the new deadline.
pub fn extend(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &EXTEND, &argv)?;
    let guard = guard::writable(ctx, EXTEND.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let active = call.keys[0];
    let id = call.values[0];

    token(&EXTEND, call.values[1])?;
    let lease = value(&EXTEND, "lease", Grammar::Ms, call.values[2])?;
    let lease_token = (call.values[1], Fields::Lease);
    let Leased {
        sets: [mut active], ..
    } = leased(&db, &EXTEND, &queue, [active], id, lease_token)?;

    guard.map_err(|r| gates::unless_gone(&EXTEND, &active, id, r))?;
    let deadline = clock::now_ms() + lease;
    let found = active.zadd_when(When::Existing, deadline, id)? != Zadd::Skipped;
    gates::not_active(&EXTEND, found)?;
    Ok(ValkeyValue::Integer(deadline))
}

/// `EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>` → `1`.
pub fn complete(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &COMPLETE, &argv)?;
    let guard = guard::writable(ctx, COMPLETE.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, done) = (call.keys[0], call.keys[1]);
    let (id, result) = (call.values[0], call.values[2]);

    token(&COMPLETE, call.values[1])?;
    let keep = value(&COMPLETE, "keep", Grammar::Count, call.values[3])?;
    let lease_token = (call.values[1], Fields::Lease);
    let Leased {
        sets: [mut active, mut done],
        mut row,
        ..
    } = leased(&db, &COMPLETE, &queue, [active, done], id, lease_token)?;

    leave_active(&COMPLETE, guard, &mut active, id)?;
    let now = clock::now_ms();
    let completed = (&b"completed"[..], &b"result"[..], result);
    moves::finish(&mut row, &mut done, id, completed, keep, now)?;
    drop(row);
    moves::retain(&db, &queue, &mut done, keep)?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff>
/// <max_attempts> <keep>` → the job's new state: `pending`, `scheduled` or `dead`.
pub fn fail(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &FAIL, &argv)?;
    let guard = guard::writable(ctx, FAIL.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, pending, schedule, dead) =
        (call.keys[0], call.keys[1], call.keys[2], call.keys[3]);
    let (id, error) = (call.values[0], call.values[2]);

    token(&FAIL, call.values[1])?;
    let backoff = value(&FAIL, "backoff", Grammar::Delay, call.values[3])?;
    let max_attempts = value(&FAIL, "max attempts", Grammar::Positive, call.values[4])?;
    let keep = value(&FAIL, "keep", Grammar::Count, call.values[5])?;
    let sets = [active, pending, schedule, dead];
    let lease_token = (call.values[1], Fields::All);
    let Leased {
        sets: [mut active, mut pending, mut schedule, mut dead],
        mut row,
        fields,
    } = leased(&db, &FAIL, &queue, sets, id, lease_token)?;

    leave_active(&FAIL, guard, &mut active, id)?;
    let now = clock::now_ms();
    let state: &[u8] = if fields.exhausted(max_attempts) {
        let error = (&b"dead"[..], &b"error"[..], error);
        moves::finish(&mut row, &mut dead, id, error, keep, now)?;
        drop(row);
        moves::retain(&db, &queue, &mut dead, keep)?;
        b"dead"
    } else if backoff == 0 {
        moves::set_state_with(&mut row, b"pending", b"error", error)?;
        moves::add(&mut pending, fields.priority(), id)?;
        moves::wake(&db, &queue, 1);
        b"pending"
    } else {
        moves::set_state_with(&mut row, b"scheduled", b"error", error)?;
        moves::add(&mut schedule, now + backoff, id)?;
        moves::wake_scheduled(&db, &queue);
        b"scheduled"
    };
    Ok(ValkeyValue::StringBuffer(state.to_vec()))
}

/// `EMQ.RESCHEDULE 3 <active> <schedule> <base> <id> <token> <delay>` → the due time.
pub fn reschedule(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &RESCHEDULE, &argv)?;
    let guard = guard::writable(ctx, RESCHEDULE.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, schedule) = (call.keys[0], call.keys[1]);
    let id = call.values[0];

    token(&RESCHEDULE, call.values[1])?;
    let delay = value(&RESCHEDULE, "delay", Grammar::Delay, call.values[2])?;
    let lease_token = (call.values[1], Fields::Lease);
    let sets = [active, schedule];
    let Leased {
        sets: [mut active, mut schedule],
        mut row,
        ..
    } = leased(&db, &RESCHEDULE, &queue, sets, id, lease_token)?;

    leave_active(&RESCHEDULE, guard, &mut active, id)?;
    let due = clock::now_ms() + delay;
    moves::set_state(&mut row, b"scheduled")?;
    moves::add(&mut schedule, due, id)?;
    moves::wake_scheduled(&db, &queue);
    Ok(ValkeyValue::Integer(due))
}

/// `EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>` → `1`: back to
/// `pending` now, the attempt given back by raising the row's `max_attempts` to M + 1 (M: the
/// row's own when a *positive*, else the given one; `attempts`, the lease token, never decreases).
pub fn requeue(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &REQUEUE, &argv)?;
    let guard = guard::writable(ctx, REQUEUE.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, pending) = (call.keys[0], call.keys[1]);
    let id = call.values[0];

    token(&REQUEUE, call.values[1])?;
    let max_attempts = value(&REQUEUE, "max attempts", Grammar::Positive, call.values[2])?;
    let lease_token = (call.values[1], Fields::All);
    let sets = [active, pending];
    let Leased {
        sets: [mut active, mut pending],
        mut row,
        fields,
    } = leased(&db, &REQUEUE, &queue, sets, id, lease_token)?;

    leave_active(&REQUEUE, guard, &mut active, id)?;
    let budget = (fields.max_attempts(max_attempts) + 1).to_string();
    let hset: [(&[u8], &[u8]); 2] = [(b"state", b"pending"), (b"max_attempts", budget.as_bytes())];
    row.hset(&hset)?;
    moves::add(&mut pending, fields.priority(), id)?;
    moves::wake(&db, &queue, 1);
    Ok(ValkeyValue::Integer(1))
}

//! A leased job's own verbs: `EMQ.EXTEND`, `EMQ.COMPLETE`, `EMQ.COMPLETENEXT`, `EMQ.FAIL`,
//! `EMQ.RESCHEDULE`, `EMQ.REQUEUE`.
//!
//! Each presents the lease token its claim returned. Steps: shape → layout → fence → values →
//! id gate → type gate → row gate → lease gate → write guard → writes.

use valkey_module::{Context, ValkeyValue};

use crate::bus::{short, Bus};
use crate::clock;
use crate::direct::{Args, Db, Key, When, Zadd};
use crate::errors::{Refusal, Reply};
use crate::gates::{self, Fields, Row};
use crate::guard;
use crate::keyspace::{Queue, OUTBOX};
use crate::limits;
use crate::moves;
use crate::open::{argv, open};
use crate::outbox::{self, COMPLETED, FAILED};
use crate::protocol::{complete, completenext, extend, fail, requeue, reschedule};
use crate::shape::Form;
use crate::verbs::jobs;

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
    use extend::{ACTIVE, FORM, ID, LEASE_MS, TOKEN};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let active = ACTIVE.of(&call);
    let id = ID.of(&call);

    TOKEN.read(&call)?;
    let lease = LEASE_MS.read(&call)?;
    let lease_token = (TOKEN.of(&call), Fields::Lease);
    let Leased {
        sets: [mut active], ..
    } = leased(&db, &FORM, &queue, [active], id, lease_token)?;

    guard.map_err(|r| gates::unless_gone(&FORM, &active, id, r))?;
    let deadline = clock::now_ms() + lease;
    let found = active.zadd_when(When::Existing, deadline, id)? != Zadd::Skipped;
    gates::not_active(&FORM, found)?;
    Ok(ValkeyValue::Integer(deadline))
}

/// `EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>` → `1`.
pub fn complete(ctx: &Context, args: Args) -> Reply {
    use complete::{ACTIVE, DONE, FORM, ID, KEEP, RESULT, TOKEN};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    TOKEN.read(&call)?;
    let result = RESULT.read(&call)?;
    let keep = KEEP.read(&call)?;
    let sets = (ACTIVE.of(&call), DONE.of(&call));
    let job = (ID.of(&call), TOKEN.of(&call), result, keep);
    completion(&db, &FORM, &queue, guard, sets, job)?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.COMPLETENEXT 4 <active> <done> <pending> <base> <id> <token> <result> <keep>
/// <lease_ms>` → `[1]`, `[1, <wait>]` or `[1, <id>, <payload>, <attempts>, <deadline>,
/// <timeout>]`: `EMQ.COMPLETE`'s transition, then `EMQ.CLAIM`'s on the same queue.
pub fn completenext(ctx: &Context, args: Args) -> Reply {
    use completenext::{ACTIVE, DONE, FORM, ID, KEEP, LEASE_MS, PENDING, RESULT, TOKEN};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    TOKEN.read(&call)?;
    let result = RESULT.read(&call)?;
    let keep = KEEP.read(&call)?;
    let lease = LEASE_MS.read(&call)?;
    let (active, pending) = (ACTIVE.of(&call), PENDING.of(&call));
    let job = (ID.of(&call), TOKEN.of(&call), result, keep);
    completion(&db, &FORM, &queue, guard, (active, DONE.of(&call)), job)?;
    let next = jobs::lease_next(ctx, &db, &FORM, &queue, (pending, active), lease, Ok(()));
    Ok(and_next(ValkeyValue::Integer(1), next))
}

/// A settled job's reply, then what the claim after it answered: nothing (`pending` empty, the
/// queue paused, or the claim refused: the next `EMQ.CLAIM` meets the refusal), the limited
/// claim's integer, or the leased job's five fields.
fn and_next(settled: ValkeyValue, next: Result<Option<ValkeyValue>, Refusal>) -> ValkeyValue {
    let mut reply = vec![settled];
    match next {
        Ok(Some(ValkeyValue::Array(job))) => reply.extend(job),
        Ok(Some(limited)) => reply.push(limited),
        Ok(None) | Err(_) => {}
    }
    ValkeyValue::Array(reply)
}

/// `EMQ.COMPLETE`'s gates and writes, in `form`'s verb, its values read: the job
/// `(id, token, result, keep)` leaves `active` for `done` (or is deleted).
fn completion(
    db: &Db,
    form: &Form,
    queue: &Queue,
    guard: Result<(), Refusal>,
    (active, done): (&[u8], &[u8]),
    (id, token, result, keep): (&[u8], &[u8], &[u8], i64),
) -> Result<(), Refusal> {
    let Leased {
        sets: [mut active, mut done],
        mut row,
        fields,
    } = leased(db, form, queue, [active, done], id, (token, Fields::Lease))?;
    // A flow's child (a row with a parent) writes its outbox: its type gate, before any write.
    let [parent] = row.hash_get([b"parent"])?;
    let parent = parent.filter(|p| !p.is_empty());
    let outbox_key = queue.key(OUTBOX);
    let mut outbox = match parent {
        Some(_) => Some(gates::sorted_sets(db, [&outbox_key[..]])?),
        None => None,
    };

    leave_active(form, guard, &mut active, id)?;
    limits::release(db, queue, None, &fields.groups(), 1);
    Bus::open(db, queue).job(b"completed", id, token, None)?;
    let now = clock::now_ms();
    if let Some([outbox]) = outbox.as_mut() {
        outbox::post(outbox, now, parent.as_deref(), (id, COMPLETED, result))?;
    }
    let completed = (&b"completed"[..], &b"result"[..], result);
    moves::finish(&mut row, &mut done, id, completed, keep, now)?;
    drop(row);
    moves::retain(db, queue, &mut done, keep)
}

/// `EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff>
/// <max_attempts> <keep>` → the job's new state: `pending`, `scheduled` or `dead`.
pub fn fail(ctx: &Context, args: Args) -> Reply {
    use fail::{
        ACTIVE, BACKOFF, DEAD, ERROR, FORM, ID, KEEP, MAX_ATTEMPTS, PENDING, SCHEDULE, TOKEN,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, pending) = (ACTIVE.of(&call), PENDING.of(&call));
    let (schedule, dead) = (SCHEDULE.of(&call), DEAD.of(&call));
    let id = ID.of(&call);

    TOKEN.read(&call)?;
    let error = ERROR.read(&call)?;
    let backoff = BACKOFF.read(&call)?;
    let max_attempts = MAX_ATTEMPTS.read(&call)?;
    let keep = KEEP.read(&call)?;
    let outbox = queue.key(OUTBOX);
    let sets = [active, pending, schedule, dead, &outbox];
    let lease_token = (TOKEN.of(&call), Fields::All);
    let Leased {
        sets: [mut active, mut pending, mut schedule, mut dead, mut outbox],
        mut row,
        fields,
    } = leased(&db, &FORM, &queue, sets, id, lease_token)?;

    leave_active(&FORM, guard, &mut active, id)?;
    limits::release(&db, &queue, Some(&mut pending), &fields.groups(), 1);
    let (token, reason) = (TOKEN.of(&call), short(error));
    let mut bus = Bus::open(&db, &queue);
    bus.job(b"failed", id, token, Some((b"reason", reason)))?;
    let now = clock::now_ms();
    let state: &[u8] = if fields.exhausted(max_attempts) {
        bus.job(b"dead", id, token, Some((b"reason", reason)))?;
        let [parent] = row.hash_get([b"parent"])?;
        outbox::post(&mut outbox, now, parent.as_deref(), (id, FAILED, error))?;
        let error = (&b"dead"[..], &b"error"[..], error);
        moves::finish(&mut row, &mut dead, id, error, keep, now)?;
        drop(row);
        moves::retain(&db, &queue, &mut dead, keep)?;
        b"dead"
    } else if backoff == 0 {
        bus.job(b"retrying", id, token, Some((b"delay", BACKOFF.of(&call))))?;
        moves::set_state_with(&mut row, b"pending", b"error", error)?;
        moves::add(&mut pending, fields.priority(), id)?;
        moves::wake(&db, &queue, 1);
        b"pending"
    } else {
        bus.job(b"retrying", id, token, Some((b"delay", BACKOFF.of(&call))))?;
        moves::set_state_with(&mut row, b"scheduled", b"error", error)?;
        moves::add(&mut schedule, now + backoff, id)?;
        moves::wake_scheduled(&db, &queue);
        b"scheduled"
    };
    Ok(ValkeyValue::StringBuffer(state.to_vec()))
}

/// `EMQ.RESCHEDULE 3 <active> <schedule> <base> <id> <token> <delay>` → the due time.
pub fn reschedule(ctx: &Context, args: Args) -> Reply {
    use reschedule::{ACTIVE, DELAY, FORM, ID, SCHEDULE, TOKEN};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, schedule) = (ACTIVE.of(&call), SCHEDULE.of(&call));
    let id = ID.of(&call);

    TOKEN.read(&call)?;
    let delay = DELAY.read(&call)?;
    let lease_token = (TOKEN.of(&call), Fields::Lease);
    let sets = [active, schedule];
    let Leased {
        sets: [mut active, mut schedule],
        mut row,
        fields,
    } = leased(&db, &FORM, &queue, sets, id, lease_token)?;

    leave_active(&FORM, guard, &mut active, id)?;
    limits::release(&db, &queue, None, &fields.groups(), 1);
    let due = clock::now_ms() + delay;
    moves::set_state(&mut row, b"scheduled")?;
    moves::add(&mut schedule, due, id)?;
    let delayed = Some((&b"delay"[..], DELAY.of(&call)));
    Bus::open(&db, &queue).job(b"delayed", id, TOKEN.of(&call), delayed)?;
    moves::wake_scheduled(&db, &queue);
    Ok(ValkeyValue::Integer(due))
}

/// `EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>` → `1`: back to
/// `pending` now, the attempt given back by raising the row's `max_attempts` to M + 1 (M: the
/// row's own when a *positive*, else the given one; `attempts`, the lease token, never decreases).
pub fn requeue(ctx: &Context, args: Args) -> Reply {
    use requeue::{ACTIVE, FORM, ID, MAX_ATTEMPTS, PENDING, TOKEN};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (active, pending) = (ACTIVE.of(&call), PENDING.of(&call));
    let id = ID.of(&call);

    TOKEN.read(&call)?;
    let max_attempts = MAX_ATTEMPTS.read(&call)?;
    let lease_token = (TOKEN.of(&call), Fields::All);
    let sets = [active, pending];
    let Leased {
        sets: [mut active, mut pending],
        mut row,
        fields,
    } = leased(&db, &FORM, &queue, sets, id, lease_token)?;

    leave_active(&FORM, guard, &mut active, id)?;
    limits::release(&db, &queue, Some(&mut pending), &fields.groups(), 1);
    let budget = (fields.max_attempts(max_attempts) + 1).to_string();
    let hset: [(&[u8], &[u8]); 2] = [(b"state", b"pending"), (b"max_attempts", budget.as_bytes())];
    row.hset(&hset)?;
    moves::add(&mut pending, fields.priority(), id)?;
    Bus::open(&db, &queue).job(b"requeued", id, TOKEN.of(&call), None)?;
    moves::wake(&db, &queue, 1);
    Ok(ValkeyValue::Integer(1))
}

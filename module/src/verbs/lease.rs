//! A leased job's own verbs: `EMQ.EXTEND`, `EMQ.COMPLETE`, `EMQ.COMPLETENEXT`, `EMQ.FAIL`,
//! `EMQ.FAILNEXT`, `EMQ.RESCHEDULE`, `EMQ.REQUEUE`, and `EMQ.COMPLETEN` ([`completen`]: many
//! completions, then claims).
//!
//! Each presents the lease token its claim returned. Steps: shape → layout → fence → values →
//! id gate → type gate → row gate → lease gate → write guard → writes.

use valkey_module::{Context, ValkeyValue};

use crate::bus::{short, Bus, RESULT_MAX};
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
use crate::protocol::{complete, completenext, extend, fail, failnext, requeue, reschedule};
use crate::shape::{Call, Form, ValueAt};
use crate::values::{Number, Text};
use crate::verbs::jobs;

mod completen;
pub use completen::completen;

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
    completed(&db, &queue, job, None)?;
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
    let sets = (pending, active);
    let next = jobs::lease_next(ctx, &db, &FORM, &queue, sets, (lease, false), Ok(()));
    let leased = match &next {
        Ok(Some(ValkeyValue::Array(job))) => leased_job(job),
        _ => None,
    };
    completed(&db, &queue, job, leased)?;
    Ok(and_next(ValkeyValue::Integer(1), next))
}

/// The id and attempts of the job a claim leased (`EMQ.CLAIM`'s reply: id, payload, attempts,
/// …), for the `completed` entry's `next` and `next_attempt`.
fn leased_job(job: &[ValkeyValue]) -> Option<(&[u8], i64)> {
    match (job.first()?, job.get(2)?) {
        (ValkeyValue::StringBuffer(id), ValkeyValue::Integer(n)) => Some((&id[..], *n)),
        _ => None,
    }
}

/// The `completed` entry, after the completion's writes (and `EMQ.COMPLETENEXT`'s claim): id,
/// attempt, the result when at most [`RESULT_MAX`] bytes, and the job `next` leased, if any.
fn completed(
    db: &Db,
    queue: &Queue,
    (id, token, result, _): (&[u8], &[u8], &[u8], i64),
    next: Option<(&[u8], i64)>,
) -> Result<(), Refusal> {
    let mut fields: Vec<(&[u8], &[u8])> = Vec::with_capacity(3);
    if result.len() <= RESULT_MAX {
        fields.push((b"result", result));
    }
    let attempt = next.map(|(_, n)| n.to_string());
    if let (Some((id, _)), Some(attempt)) = (next, attempt.as_deref()) {
        fields.push((b"next", id));
        fields.push((b"next_attempt", attempt.as_bytes()));
    }
    Bus::open(db, queue).job_with(b"completed", id, token, &fields)
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
    // done's type gate where the call writes it (keep > 0): keep 0 never touches done.
    let mut done = match keep {
        0 => db.open(done),
        _ => {
            gates::job_id(form, id)?;
            let [done] = gates::sorted_sets(db, [done])?;
            done
        }
    };
    let Leased {
        sets: [mut active],
        mut row,
        fields,
    } = leased(db, form, queue, [active], id, (token, Fields::Lease))?;
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
/// <max_attempts> <keep> <stack>` → the job's new state: `pending`, `scheduled` or `dead`.
pub fn fail(ctx: &Context, args: Args) -> Reply {
    use fail::{
        ACTIVE, BACKOFF, DEAD, ERROR, FORM, ID, KEEP, MAX_ATTEMPTS, PENDING, SCHEDULE, STACK, TOKEN,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let mut failed = Failed::read(&call, (ID, TOKEN, ERROR, BACKOFF, MAX_ATTEMPTS, KEEP))?;
    failed.stack = STACK.read(&call)?;
    let sets = [ACTIVE, PENDING, SCHEDULE, DEAD].map(|slot| slot.of(&call));
    let state = failure(&db, &FORM, &queue, guard, sets, &failed)?;
    Ok(ValkeyValue::StringBuffer(state.to_vec()))
}

/// `EMQ.FAILNEXT 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff>
/// <max_attempts> <keep> <lease_ms> <stack>` → `[<state>]`, `[<state>, <wait>]` or `[<state>, <id>,
/// <payload>, <attempts>, <deadline>, <timeout>]`: `EMQ.FAIL`'s transition, then `EMQ.CLAIM`'s
/// on the same queue (which leases the failed job again when it went back to `pending` at the
/// head, as a claim after the failure would).
pub fn failnext(ctx: &Context, args: Args) -> Reply {
    use failnext::{
        ACTIVE, BACKOFF, DEAD, ERROR, FORM, ID, KEEP, LEASE_MS, MAX_ATTEMPTS, PENDING, SCHEDULE,
        STACK, TOKEN,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let mut failed = Failed::read(&call, (ID, TOKEN, ERROR, BACKOFF, MAX_ATTEMPTS, KEEP))?;
    let lease = LEASE_MS.read(&call)?;
    failed.stack = STACK.read(&call)?; // the last value: read in the form's order
    let sets = [ACTIVE, PENDING, SCHEDULE, DEAD].map(|slot| slot.of(&call));
    let state = failure(&db, &FORM, &queue, guard, sets, &failed)?;
    let [active, pending, ..] = sets;
    let next = jobs::lease_next(
        ctx,
        &db,
        &FORM,
        &queue,
        (pending, active),
        (lease, true),
        Ok(()),
    );
    Ok(and_next(ValkeyValue::StringBuffer(state.to_vec()), next))
}

/// A failed attempt as `EMQ.FAIL`'s values give it: the job and its lease token, the error, the
/// backoff (read, and as given: the `retrying` event carries it), max attempts, keep and the
/// stack (empty: none).
struct Failed<'a> {
    id: &'a [u8],
    token: &'a [u8],
    error: &'a [u8],
    backoff: (i64, &'a [u8]),
    max_attempts: i64,
    keep: i64,
    stack: &'a [u8],
}

/// Where a verb's form holds `EMQ.FAIL`'s first values: id, token, error, backoff, max attempts,
/// keep (the stack, the form's last value, is read by the verb in its place).
type FailValues = (ValueAt, Number, Text, Number, Number, Number);

impl<'a> Failed<'a> {
    /// Values step: `EMQ.FAIL`'s values of `call`, each checked in the form's order.
    fn read(call: &Call<'a>, at: FailValues) -> Result<Self, Refusal> {
        let (id, token, error, backoff, max_attempts, keep) = at;
        token.read(call)?;
        Ok(Failed {
            id: id.of(call),
            token: token.of(call),
            error: error.read(call)?,
            backoff: (backoff.read(call)?, backoff.of(call)),
            max_attempts: max_attempts.read(call)?,
            keep: keep.read(call)?,
            stack: b"",
        })
    }
}

/// The row's stack: the failure's, or none when it is empty (`HDEL`: a stale one removed).
fn keep_stack(row: &mut Key, stack: &[u8]) -> Result<(), Refusal> {
    if stack.is_empty() {
        return row.hdel(b"stack").map(drop);
    }
    row.hset(&[(b"stack", stack)])
}

/// `EMQ.FAIL`'s gates and writes, in `form`'s verb, its values read: the attempt `failed`
/// leaves `active` (the first of the sets: active, pending, schedule, dead) for `dead` (its
/// attempts at max attempts, the row's own winning; at most `keep` ids kept), `pending` (backoff
/// `0`) or `schedule` (due now + backoff). → the job's new state.
fn failure(
    db: &Db,
    form: &Form,
    queue: &Queue,
    guard: Result<(), Refusal>,
    [active, pending, schedule, dead]: [&[u8]; 4],
    failed: &Failed,
) -> Result<&'static [u8], Refusal> {
    let Failed {
        id,
        token,
        error,
        backoff: (backoff, backoff_text),
        max_attempts,
        keep,
        stack,
    } = *failed;
    let outbox = queue.key(OUTBOX);
    let sets = [active, pending, schedule, dead, &outbox];
    let Leased {
        sets: [mut active, mut pending, mut schedule, mut dead, mut outbox],
        mut row,
        fields,
    } = leased(db, form, queue, sets, id, (token, Fields::All))?;

    leave_active(form, guard, &mut active, id)?;
    limits::release(db, queue, Some(&mut pending), &fields.groups(), 1);
    let reason = short(error);
    let mut bus = Bus::open(db, queue);
    bus.job(b"failed", id, token, Some((b"reason", reason)))?;
    let now = clock::now_ms();
    // `0`: dead now, whatever the row's own limit (a handler's `UnrecoverableError`).
    if max_attempts == 0 || fields.exhausted(max_attempts) {
        bus.job(b"dead", id, token, Some((b"reason", reason)))?;
        let [parent] = row.hash_get([b"parent"])?;
        outbox::post(&mut outbox, now, parent.as_deref(), (id, FAILED, error))?;
        let error = (&b"dead"[..], &b"error"[..], error);
        moves::finish(&mut row, &mut dead, id, error, keep, now)?;
        if keep > 0 {
            keep_stack(&mut row, stack)?;
        }
        drop(row);
        moves::retain(db, queue, &mut dead, keep)?;
        return Ok(b"dead");
    }
    bus.job(b"retrying", id, token, Some((b"delay", backoff_text)))?;
    if backoff == 0 {
        moves::set_state_with(&mut row, b"pending", b"error", error)?;
        keep_stack(&mut row, stack)?;
        moves::add(&mut pending, fields.priority(), id)?;
        moves::wake(db, queue, 1);
        return Ok(b"pending");
    }
    moves::set_state_with(&mut row, b"scheduled", b"error", error)?;
    keep_stack(&mut row, stack)?;
    moves::add(&mut schedule, now + backoff, id)?;
    moves::wake_scheduled(db, queue);
    Ok(b"scheduled")
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

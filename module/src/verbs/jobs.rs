//! Admission and leasing: `EMQ.ENQUEUE`, `EMQ.ADD`, `EMQ.CLAIM` (and the claim `EMQ.BCLAIM`
//! runs, [`lease_head`]).
//!
//! Each verb reads like its section of the protocol: shape → layout → fence → values →
//! gates → write guard → writes. A refusal at any step writes nothing.

use valkey_module::{Context, ValkeyValue};

use crate::bus::{self, Bus};
use crate::clock;
use crate::direct::{Args, Db, Key, Kind, When, Zadd};
use crate::errors::{self, Refusal, Reply};
use crate::gates;
use crate::guard;
use crate::keyspace::{is_job_id, Queue};
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::{add, claim, enqueue};
use crate::shape::Form;
use crate::values::{Grammar, Number};

/// `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` → `1`, or `0` for a duplicate id.
pub fn enqueue(ctx: &Context, args: Args) -> Reply {
    use enqueue::{FORM, ID, PAYLOAD, PENDING, ROW};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (row, pending) = (ROW.of(&call), PENDING.of(&call));
    let (id, payload) = (ID.of(&call), PAYLOAD.of(&call));

    gates::job_id(&FORM, id)?;
    let mut row = db.open(row);
    if row.exists() {
        return Ok(ValkeyValue::Integer(0));
    }
    let [mut pending] = gates::sorted_sets(&db, [pending])?;

    guard?;
    let fields: [(&[u8], &[u8]); 3] = [
        (b"state", b"pending"),
        (b"attempts", b"0"),
        (b"payload", payload),
    ];
    row.hset(&fields)?;
    moves::add(&mut pending, 0, id)?;
    Bus::open(&db, &queue).job(b"added", id, b"0", None)?;
    moves::wake(&db, &queue, 1);
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts>
/// <trace> <group> <key> <key_ttl> <timeout> <parent>` → `1`, `0` for a duplicate id, or the
/// first job's id when the idempotency key is held.
pub fn add(ctx: &Context, args: Args) -> Reply {
    use add::{
        DELAY, FORM, GROUP, ID, KEY, KEY_TTL, MAX_ATTEMPTS, PARENT, PAYLOAD, PENDING, PRIORITY,
        ROW, SCHEDULE, TIMEOUT, TRACE,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (row, pending, schedule) = (ROW.of(&call), PENDING.of(&call), SCHEDULE.of(&call));
    let (id, payload) = (ID.of(&call), PAYLOAD.of(&call));

    let priority = PRIORITY.read(&call)?;
    let delay = DELAY.read(&call)?;
    let max_attempts = MAX_ATTEMPTS.read(&call)?;
    let trace = TRACE.read(&call)?;
    let group = GROUP.read(&call)?;
    let key = KEY.read(&call)?;
    let key_ttl = KEY_TTL.read(&call)?;
    let timeout = TIMEOUT.read(&call)?;
    let parent = PARENT.read(&call)?;

    gates::job_id(&FORM, id)?;
    let mut record = (!key.is_empty()).then(|| db.open(&queue.key(&[b"key:", key].concat())));
    if let Some(held) = record.as_ref().map(|r| r.string()).transpose()?.flatten() {
        return Ok(ValkeyValue::StringBuffer(held));
    }
    let mut row = db.open(row);
    if row.exists() {
        return Ok(ValkeyValue::Integer(0));
    }
    let [mut pending, mut schedule] = gates::sorted_sets(&db, [pending, schedule])?;

    guard?;
    let state: &[u8] = if delay == 0 { b"pending" } else { b"scheduled" };
    let mut fields: Vec<(&[u8], &[u8])> = vec![
        (b"state", state),
        (b"attempts", b"0"),
        (b"payload", payload),
    ];
    let optional: [(&[u8], &[u8], bool); 6] = [
        (b"priority", PRIORITY.of(&call), priority != 0),
        (b"max_attempts", MAX_ATTEMPTS.of(&call), max_attempts != 0),
        (b"trace", trace, !trace.is_empty()),
        (b"group", group, !group.is_empty()),
        (b"timeout", TIMEOUT.of(&call), timeout != 0),
        (b"parent", parent, !parent.is_empty()),
    ];
    fields.extend(optional.iter().filter(|f| f.2).map(|f| (f.0, f.1)));
    row.hset(&fields)?;
    if let Some(record) = record.as_mut() {
        record.set(id, (key_ttl != 0).then(|| clock::now_ms() + key_ttl))?;
    }
    let mut bus = Bus::open(&db, &queue);
    if delay == 0 {
        moves::add(&mut pending, priority, id)?;
        bus.job(b"added", id, b"0", None)?;
        moves::wake(&db, &queue, 1);
    } else {
        moves::add(&mut schedule, clock::now_ms() + delay, id)?;
        bus.job(b"delayed", id, b"0", Some((b"delay", DELAY.of(&call))))?;
        moves::wake_scheduled(&db, &queue);
    }
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>` → `[]`, or
/// `[<id>, <payload>, <attempts>, <deadline>]`. Orphans ahead of the head are dropped and counted
/// (at most [`MAX_ORPHANS`] per call).
pub fn claim(ctx: &Context, args: Args) -> Reply {
    Ok(lease_head(ctx, args, &CLAIM)?.0.unwrap_or_else(empty))
}

/// How a verb claims: its form (`EMQ.CLAIM`'s keys and lease first), its lease value, and the
/// timeout read after it, if any (`EMQ.BCLAIM`'s).
pub struct Claimer {
    pub form: &'static Form,
    pub lease: Number,
    pub timeout: Option<Number>,
}

/// `EMQ.CLAIM`'s claimer.
const CLAIM: Claimer = Claimer {
    form: &claim::FORM,
    lease: claim::LEASE_MS,
    timeout: None,
};

/// The claim of `EMQ.CLAIM` and `EMQ.BCLAIM`, shape to writes, as `how`'s verb: the claimed
/// job's reply, or `None` (nothing to claim: an empty or paused queue), with the timeout read
/// after the lease (0 without one).
pub fn lease_head(
    ctx: &Context,
    args: Args,
    how: &Claimer,
) -> Result<(Option<ValkeyValue>, i64), Refusal> {
    use claim::{ACTIVE, PENDING};
    let form = how.form;
    let argv = argv(args);
    let (call, queue) = open(ctx, form, &argv)?;
    let guard = guard::writable(ctx, form.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (pending, active) = (PENDING.of(&call), ACTIVE.of(&call));

    let lease = how.lease.read(&call)?;
    let timeout = how.timeout.map_or(Ok(0), |value| value.read(&call))?;
    let (paused, maxlen) = flags(&db, &queue)?;
    if paused {
        return Ok((None, timeout));
    }

    let [mut pending, mut active] = gates::sorted_sets(&db, [pending, active])?;
    let (orphans, head) = heads(&db, &queue, &pending)?;
    let Some((id, mut row)) = head else {
        if !orphans.is_empty() {
            guard?;
            drop_orphans(&db, &queue, &mut pending, &orphans)?;
        }
        return Ok((None, timeout));
    };
    // The membership gate (head already active) is decided by ZADD NX, the first write; a
    // refusal before it asks ZSCORE first, so the order of refusals is the protocol's.
    let unless_active = |refusal: Refusal| -> Refusal {
        gates::by_membership(
            &active,
            &id,
            errors::head_already_active(form.verb),
            refusal,
        )
    };
    let (attempts, payload, timeout_ms) = row_fields(&row, form).map_err(unless_active)?;
    let attempts = attempts + 1;

    guard.map_err(unless_active)?;
    let deadline = clock::now_ms() + lease;
    if active.zadd_when(When::New, deadline, &id)? == Zadd::Skipped {
        return Err(errors::head_already_active(form.verb));
    }
    drop_orphans(&db, &queue, &mut pending, &orphans)?;
    write_check(form, pending.zrem(&id)?)?;
    let attempts_text = attempts.to_string();
    let lease_fields: [(&[u8], &[u8]); 3] = [
        (b"state", b"active"),
        (b"attempts", attempts_text.as_bytes()),
        (b"lease_epoch", clock::run_id(ctx)),
    ];
    row.hset(&lease_fields)?;
    let mut bus = Bus::with(&db, &queue, maxlen.as_deref());
    bus.job(b"active", &id, attempts_text.as_bytes(), None)?;

    let reply = ValkeyValue::Array(vec![
        ValkeyValue::StringBuffer(id),
        payload.map_or(ValkeyValue::Null, ValkeyValue::StringBuffer),
        ValkeyValue::Integer(attempts),
        ValkeyValue::Integer(deadline),
        ValkeyValue::Integer(timeout_ms),
    ]);
    Ok((Some(reply), timeout))
}

/// The most orphans one claim drops.
pub const MAX_ORPHANS: usize = 100;

/// The orphans ahead of the head, and the head with its row (open for writing), if any.
type Heads<'d> = (Vec<Vec<u8>>, Option<(Vec<u8>, Key<'d>)>);

/// The claimable head of the open `pending` (a `JOB` id whose row is a hash; the row open for the
/// claim's writes) and the orphans ahead of it, lowest first: an orphan is an id without the
/// `JOB` prefix or whose row is not a hash. At most [`MAX_ORPHANS`]: when the head after them is
/// an orphan too, there is no head. Reads only.
fn heads<'d>(db: &'d Db, queue: &Queue, pending: &Key) -> Result<Heads<'d>, Refusal> {
    // The usual case first: the head is claimable (one id read, its row opened once).
    let Some(first) = head(pending)? else {
        return Ok((Vec::new(), None));
    };
    if let Some(row) = claimable(db, queue, &first) {
        return Ok((Vec::new(), Some((first, row))));
    }
    let mut orphans = vec![first];
    for id in pending.first(MAX_ORPHANS + 1)?.into_iter().skip(1) {
        if let Some(row) = claimable(db, queue, &id) {
            return Ok((orphans, Some((id, row))));
        }
        if orphans.len() == MAX_ORPHANS {
            break;
        }
        orphans.push(id);
    }
    Ok((orphans, None))
}

/// The row of `id`, open for the claim's writes, when `id` is a `JOB` id whose row is a hash.
fn claimable<'d>(db: &'d Db, queue: &Queue, id: &[u8]) -> Option<Key<'d>> {
    if !is_job_id(id) {
        return None;
    }
    let row = db.open(&queue.job(id));
    (row.kind() == Kind::Hash).then_some(row)
}

/// The orphans leave `pending` (`ZREM` each) and are counted, one write:
/// `HINCRBY <base>meta orphans <n>` when the field is absent or a *count*, else
/// `HSET <base>meta orphans <n>` (a field that no transition wrote starts over). Nothing for none.
fn drop_orphans(
    db: &Db,
    queue: &Queue,
    pending: &mut Key,
    orphans: &[Vec<u8>],
) -> Result<(), Refusal> {
    if orphans.is_empty() {
        return Ok(());
    }
    for id in orphans {
        moves::remove(pending, id)?;
    }
    let n = orphans.len() as i64;
    let mut meta = db.open(&queue.meta());
    let [before] = meta.hash_get([ORPHANS])?;
    if before.is_none_or(|text| Grammar::Count.parse(&text).is_some()) {
        meta.hincrby(ORPHANS, n)?;
    } else {
        meta.hset(&[(ORPHANS, n.to_string().as_bytes())])?;
    }
    Ok(())
}

/// The `meta` field counting the orphans claims dropped.
const ORPHANS: &[u8] = b"orphans";

/// The empty-array reply (empty or paused queue).
fn empty() -> ValkeyValue {
    ValkeyValue::Array(Vec::new())
}

/// Whether the queue's `meta` hash has `paused` = `1`, and its `events_maxlen` as stored
/// (`HMGET <meta> paused events_maxlen`).
type Flags = (bool, Option<Vec<u8>>);
fn flags(db: &Db, queue: &Queue) -> Result<Flags, Refusal> {
    let [flag, maxlen] = db
        .read(&queue.meta())
        .hash_get([b"paused", bus::MAXLEN_FIELD])?;
    Ok((flag.as_deref() == Some(b"1"), maxlen))
}

/// The lowest-scored id of the open `pending` (ties by id), if any: `ZRANGE <pending> 0 0`.
fn head(pending: &Key) -> Result<Option<Vec<u8>>, Refusal> {
    Ok(pending.first(1)?.into_iter().next())
}

/// The open row's `attempts` (absent counts as 0) and `payload` (absent is `None`); a refusal
/// names `form`'s verb.
/// The leased row's attempts, payload and handler time limit (its `timeout` when a count of ms,
/// else 0).
fn row_fields(row: &Key, form: &Form) -> Result<(i64, Option<Vec<u8>>, i64), Refusal> {
    let [attempts, payload, timeout] = row.hash_get([b"attempts", b"payload", b"timeout"])?;
    let attempts = match attempts {
        None => 0,
        Some(text) => parse_attempts(&text).ok_or_else(|| errors::bad_attempts(form.verb))?,
    };
    let timeout = timeout.and_then(|t| Grammar::Count.parse(&t)).unwrap_or(0);
    Ok((attempts, payload, timeout))
}

/// A stored attempt count: 1 to 15 decimal digits (no sign), as `claim.lua` accepts it.
fn parse_attempts(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 15 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A write that must have changed exactly one member.
fn write_check(form: &Form, changed_one: bool) -> Result<(), Refusal> {
    if changed_one {
        Ok(())
    } else {
        Err(errors::write_check(form.verb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_grammar() {
        assert_eq!(parse_attempts(b"0"), Some(0));
        assert_eq!(parse_attempts(b"12"), Some(12));
        assert_eq!(parse_attempts(b"-1"), None);
        assert_eq!(parse_attempts(b"x"), None);
        assert_eq!(parse_attempts(b""), None);
        assert_eq!(parse_attempts(b"+5"), None);
        assert_eq!(parse_attempts(b"1234567890123456"), None);
    }
}

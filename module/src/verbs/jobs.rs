//! Admission and leasing: `EMQ.ENQUEUE`, `EMQ.ADD`, `EMQ.CLAIM` (and the claim `EMQ.BCLAIM`
//! runs, [`lease_head`]), `EMQ.CLAIMN` ([`claimn`]: the claim in a loop).
//!
//! Each verb reads like its section of the protocol: shape → layout → fence → values →
//! gates → write guard → writes. A refusal at any step writes nothing.

use valkey_module::{Context, ValkeyValue};

use crate::bus::Bus;
use crate::clock;
use crate::direct::{Args, Db, HSET_MAX_PAIRS};
use crate::errors::Reply;
use crate::gates;
use crate::guard;
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::{add, enqueue};

mod claiming;
mod claimn;
pub use claiming::{claim, lease_head, lease_next, Claimer};
pub use claimn::claimn;

/// The optional fields of a row `ADD` writes (beside `state`, `attempts`, `payload`).
const ADD_OPTIONAL: usize = 8;
const _: () = assert!(
    3 + ADD_OPTIONAL <= HSET_MAX_PAIRS,
    "a new row of ADD fits one HSET"
);

/// `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` → `1`, or `0` for a duplicate id.
pub fn enqueue(ctx: &Context, args: Args) -> Reply {
    use enqueue::{FORM, ID, PAYLOAD, PENDING, ROW};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (row, pending) = (ROW.of(&call), PENDING.of(&call));
    let (id, payload) = (ID.of(&call), PAYLOAD.read(&call)?);

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
/// <trace> <group> <key> <key_ttl> <timeout> <parent> <name> <backoff>` → `1`, `0` for a duplicate id, or the
/// first job's id when the idempotency key is held.
pub fn add(ctx: &Context, args: Args) -> Reply {
    use add::{
        BACKOFF, DELAY, FORM, GROUP, ID, KEY, KEY_TTL, MAX_ATTEMPTS, NAME, PARENT, PAYLOAD,
        PENDING, PRIORITY, ROW, SCHEDULE, TIMEOUT, TRACE,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (row, pending, schedule) = (ROW.of(&call), PENDING.of(&call), SCHEDULE.of(&call));
    let (id, payload) = (ID.of(&call), PAYLOAD.read(&call)?);

    let priority = PRIORITY.read(&call)?;
    let delay = DELAY.read(&call)?;
    let max_attempts = MAX_ATTEMPTS.read(&call)?;
    let trace = TRACE.read(&call)?;
    let group = GROUP.read(&call)?;
    let key = KEY.read(&call)?;
    let key_ttl = KEY_TTL.read(&call)?;
    let timeout = TIMEOUT.read(&call)?;
    let parent = PARENT.read(&call)?;
    let name = NAME.read(&call)?;
    let backoff = BACKOFF.read(&call)?;

    gates::job_id(&FORM, id)?;
    let mut record = (!key.is_empty()).then(|| db.open(&queue.record(key)));
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
    let optional: [(&[u8], &[u8], bool); ADD_OPTIONAL] = [
        (b"priority", PRIORITY.of(&call), priority != 0),
        (b"max_attempts", MAX_ATTEMPTS.of(&call), max_attempts != 0),
        (b"trace", trace, !trace.is_empty()),
        (b"group", group, !group.is_empty()),
        (b"timeout", TIMEOUT.of(&call), timeout != 0),
        (b"parent", parent, !parent.is_empty()),
        (b"name", name, !name.is_empty()),
        (b"backoff", backoff, !backoff.is_empty()),
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

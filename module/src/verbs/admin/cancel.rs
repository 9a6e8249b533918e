//! `EMQ.CANCEL`: a job that has not finished — pending, scheduled or active — is dead at once
//! with the error `cancelled` (the row's `cancelled` field: the attempt it ended), no retry. No
//! lease gate: an operator cancels; the holder of an active job learns it from its next lease
//! renewal, refused as `job is not active`.

use valkey_module::{Context, ValkeyValue};

use crate::bus::Bus;
use crate::clock;
use crate::direct::{Args, Db};
use crate::errors::Reply;
use crate::gates::{self, Fields};
use crate::guard;
use crate::keyspace::{OUTBOX, PARKED};
use crate::limits;
use crate::moves;
use crate::open::{argv, open};
use crate::outbox::{self, FAILED};
use crate::protocol::cancel;

/// The error a cancelled job's row and its events carry.
const CANCELLED: &[u8] = b"cancelled";

/// `EMQ.CANCEL 5 <pending> <active> <schedule> <dead> <base> <id>` → the state before the call:
/// `pending`, `scheduled`, `active` (cancelled), anything else (nothing written).
pub fn cancel(ctx: &Context, args: Args) -> Reply {
    use cancel::{ACTIVE, DEAD, FORM, ID, PENDING, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let id = ID.of(&call);

    gates::job_id(&FORM, id)?;
    let outbox_key = queue.key(OUTBOX);
    let keys = [PENDING, ACTIVE, SCHEDULE, DEAD].map(|key| key.of(&call));
    let [mut pending, mut active, mut schedule, mut dead, mut outbox] =
        gates::sorted_sets(&db, [keys[0], keys[1], keys[2], keys[3], &outbox_key[..]])?;
    let (mut row, fields) = gates::row(&db, &FORM, &queue.job(id), Fields::Lease)?;
    let state = fields.state.clone().unwrap_or_default();
    let home = match &state[..] {
        b"pending" => &mut pending,
        b"scheduled" => &mut schedule,
        b"active" => &mut active,
        _ => return Ok(ValkeyValue::StringBuffer(state)),
    };

    guard?;
    let now = clock::now_ms();
    moves::remove(home, id)?;
    let groups = fields.groups();
    match &state[..] {
        b"active" => limits::release(&db, &queue, Some(&mut pending), &groups, 1),
        b"pending" => {
            // Parked by flow control: the id waits in `<base>group:<group>` (a key of another
            // type holds none).
            for g in &groups {
                let mut parked = db.open(&queue.group(g));
                if matches!(parked.zrem(id), Ok(true)) && !parked.exists() {
                    drop(parked);
                    let _ = db.open(&queue.key(PARKED)).zrem(g);
                }
            }
        }
        _ => {}
    }
    let attempt = fields.attempts().to_string();
    let mut bus = Bus::open(&db, &queue);
    let reason = Some((&b"reason"[..], CANCELLED));
    bus.job(b"failed", id, attempt.as_bytes(), reason)?;
    bus.job(b"dead", id, attempt.as_bytes(), reason)?;
    let [parent] = row.hash_get([b"parent"])?;
    outbox::post(&mut outbox, now, parent.as_deref(), (id, FAILED, CANCELLED))?;
    let hset: [(&[u8], &[u8]); 3] = [
        (b"state", b"dead"),
        (b"error", CANCELLED),
        (b"cancelled", attempt.as_bytes()),
    ];
    row.hset(&hset)?;
    moves::add(&mut dead, now, id)?;
    Ok(ValkeyValue::StringBuffer(state))
}

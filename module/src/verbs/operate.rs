//! Operator verbs that act on many jobs or one waiting job: `EMQ.EXPEDITE` (a scheduled job
//! runs now), `EMQ.CLEAN` (finished jobs older than a grace period), `EMQ.DRAIN` (waiting jobs),
//! `EMQ.OBLITERATE` (the whole queue), `EMQ.FORGET` (an idempotency key released early) and
//! `EMQ.UPDATE` (one job's payload replaced, in any state).
//!
//! Bounded work: the bulk verbs take at most `limit` ids per call; the host calls again. Reads
//! (picks) come before the write guard; a call that would write nothing answers without it.

use valkey_module::{Context, ValkeyValue};

use crate::bus::Bus;
use crate::clock;
use crate::direct::{Args, Db, Key};
use crate::errors::{self, Refusal, Reply};
use crate::gates::{self, Fields};
use crate::guard;
use crate::keyspace::{Queue, EVENTS, OUTBOX, WAITING};
use crate::limits;
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::{clean, drain, expedite, forget, obliterate, update};

/// `EMQ.EXPEDITE 3 <schedule> <pending> <base> <id>` → `1`: a scheduled job goes to `pending`.
pub fn expedite(ctx: &Context, args: Args) -> Reply {
    use expedite::{FORM, ID, PENDING, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (schedule, pending) = (SCHEDULE.of(&call), PENDING.of(&call));
    let id = ID.of(&call);

    gates::job_id(&FORM, id)?;
    let [mut schedule, mut pending] = gates::sorted_sets(&db, [schedule, pending])?;
    let (mut row, fields) = gates::row(&db, &FORM, &queue.job(id), Fields::All)?;
    if !fields.is(b"scheduled") || !gates::member(&schedule, id)? {
        return Err(errors::not_scheduled(FORM.verb));
    }

    guard?;
    moves::remove(&mut schedule, id)?;
    moves::to_pending(&mut row, &mut pending, fields.priority(), id)?;
    let attempts = fields.attempts().to_string();
    Bus::open(&db, &queue).job(b"promoted", id, attempts.as_bytes(), None)?;
    moves::wake(&db, &queue, 1);
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.UPDATE 2 <row> <pending> <id> <payload>` → `1`: the job's payload replaced, in any state
/// (no lease gate: a running handler keeps the payload it was given).
pub fn update(ctx: &Context, args: Args) -> Reply {
    use update::{FORM, ID, PAYLOAD, ROW};
    let argv = argv(args);
    let (call, _queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (id, payload) = (ID.of(&call), PAYLOAD.read(&call)?);

    gates::job_id(&FORM, id)?;
    let (mut row, _) = gates::row(&db, &FORM, ROW.of(&call), Fields::Lease)?;

    guard?;
    row.hset(&[(b"payload", payload)])?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.FORGET 2 <pending> <base> <key>` → `1` when the idempotency key's record was deleted,
/// `0` when the key was not held.
pub fn forget(ctx: &Context, args: Args) -> Reply {
    use forget::{FORM, KEY, PENDING};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let key = KEY.read(&call)?;

    gates::sorted_sets(&db, [PENDING.of(&call)])?;
    let mut record = db.open(&queue.record(key));
    if record.string()?.is_none() {
        return Ok(ValkeyValue::Integer(0));
    }

    guard?;
    record.delete()?;
    Ok(ValkeyValue::Integer(1))
}

/// `ZREM <set> <id>` and `DEL <base>job:<id>` for each id.
fn delete_jobs(db: &Db, queue: &Queue, set: &mut Key, ids: &[Vec<u8>]) -> Result<(), Refusal> {
    for id in ids {
        moves::remove(set, id)?;
        db.del(&queue.job(id))?;
    }
    Ok(())
}

/// `EMQ.CLEAN 3 <done> <dead> <base> <state> <grace_ms> <limit>` → the number of ids deleted:
/// the oldest of `done` (`completed`) or `dead` finished at least `grace` ms ago.
pub fn clean(ctx: &Context, args: Args) -> Reply {
    use clean::{DEAD, DONE, FORM, GRACE_MS, LIMIT, STATE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let state = STATE.of(&call);
    let which = match state {
        b"completed" => 0,
        b"dead" => 1,
        _ => return Err(errors::finished_state(FORM.verb)),
    };
    let grace = GRACE_MS.read(&call)?;
    let limit = LIMIT.read(&call)?;
    let mut sets = gates::sorted_sets(&db, [DONE.of(&call), DEAD.of(&call)])?;

    let upto = clock::now_ms() - grace;
    let ids = sets[which].range(f64::NEG_INFINITY, upto as f64, false, limit as usize)?;
    if ids.is_empty() {
        return Ok(ValkeyValue::Integer(0));
    }

    guard?;
    delete_jobs(&db, &queue, &mut sets[which], &ids)?;
    let count = ids.len().to_string();
    let fields: [(&[u8], &[u8]); 2] = [(b"state", state), (b"count", count.as_bytes())];
    Bus::open(&db, &queue).queue_with(b"cleaned", &fields)?;
    Ok(ValkeyValue::Integer(ids.len() as i64))
}

/// `EMQ.DRAIN 3 <pending> <schedule> <base> <limit>` → the number of ids deleted: the first of
/// `pending`, then the first of `schedule`, `limit` in all.
pub fn drain(ctx: &Context, args: Args) -> Reply {
    use drain::{FORM, LIMIT, PENDING, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let limit = LIMIT.read(&call)? as usize;
    let [mut pending, mut schedule] =
        gates::sorted_sets(&db, [PENDING.of(&call), SCHEDULE.of(&call)])?;

    let ready = pending.first(limit)?;
    let waiting = match limit - ready.len() {
        0 => Vec::new(),
        room => schedule.first(room)?,
    };
    let parked = limits::parked_picks(&db, &queue, limit - ready.len() - waiting.len());
    let n = ready.len() + waiting.len() + parked.iter().map(|(_, ids)| ids.len()).sum::<usize>();
    if n == 0 {
        return Ok(ValkeyValue::Integer(0));
    }

    guard?;
    delete_jobs(&db, &queue, &mut pending, &ready)?;
    delete_jobs(&db, &queue, &mut schedule, &waiting)?;
    limits::drop_parked(&db, &queue, &parked)?;
    let count = n.to_string();
    let fields: [(&[u8], &[u8]); 1] = [(b"count", count.as_bytes())];
    Bus::open(&db, &queue).queue_with(b"drained", &fields)?;
    Ok(ValkeyValue::Integer(n as i64))
}

/// `EMQ.OBLITERATE 6 <pending> <active> <schedule> <done> <dead> <base> <force> <limit>` →
/// `[<deleted>, <left>]`. The call that leaves the five sets empty deletes `meta` and `events`.
pub fn obliterate(ctx: &Context, args: Args) -> Reply {
    use obliterate::{ACTIVE, DEAD, DONE, FORCE, FORM, LIMIT, PENDING, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let force = match FORCE.of(&call) {
        b"0" => false,
        b"1" => true,
        _ => return Err(errors::force_flag(FORM.verb)),
    };
    let limit = LIMIT.read(&call)? as usize;
    let [pending, active, schedule, done, dead] =
        [PENDING, ACTIVE, SCHEDULE, DONE, DEAD].map(|key| key.of(&call));
    // A flow's parents wait in `<base>waiting`: derived from the base, a sixth set to empty.
    let waiting = queue.key(WAITING);
    let keys = [pending, active, schedule, done, dead, &waiting[..]];
    let mut sets = gates::sorted_sets(&db, keys)?;
    if !force && sets[1].card()? > 0 {
        return Err(errors::queue_active(FORM.verb));
    }

    let mut held = 0;
    let mut room = limit;
    let mut picks: [Vec<Vec<u8>>; 6] = Default::default();
    for (set, pick) in sets.iter().zip(picks.iter_mut()) {
        held += set.card()?;
        if room > 0 {
            *pick = set.first(room)?;
            room -= pick.len();
        }
    }
    let deleted = picks.iter().map(Vec::len).sum::<usize>() as i64;
    let left = held - deleted;
    let (meta, events, outbox) = (queue.meta(), queue.key(EVENTS), queue.key(OUTBOX));
    let gone = left == 0
        && [&meta, &events, &outbox]
            .iter()
            .all(|key| !db.read(key).exists())
        && !limits::present(&db, &queue);
    if deleted == 0 && gone {
        return Ok(obliterated(0, 0));
    }

    guard?;
    for (set, pick) in sets.iter_mut().zip(&picks) {
        delete_jobs(&db, &queue, set, pick)?;
    }
    if left == 0 {
        limits::forget(&db, &queue)?;
        db.del(&meta)?;
        db.del(&events)?;
        db.del(&outbox)?;
    }
    Ok(obliterated(deleted, left))
}

/// The reply of `OBLITERATE`: `[<deleted>, <left>]`.
fn obliterated(deleted: i64, left: i64) -> ValkeyValue {
    ValkeyValue::Array(vec![
        ValkeyValue::Integer(deleted),
        ValkeyValue::Integer(left),
    ])
}

//! Operator verbs: `EMQ.RETRY` (dead → pending), `EMQ.REMOVE` (delete a job that is not
//! active), `EMQ.PAUSE` / `EMQ.RESUME` (the queue's `paused` flag), `EMQ.LANES` (the lane counts
//! a laned queue is used with), `EMQ.EVENTS` (the queue's event bus settings), `EMQ.CANCEL` (a
//! job that has not finished is dead at once, [`cancel`]).

use valkey_module::{Context, ValkeyValue};

use crate::bus::{self, Bus};
use crate::direct::{Args, Db, Key, Kind};
use crate::errors::{self, Refusal, Reply};
use crate::gates::{self, Fields, Row};
use crate::guard;
use crate::keyspace::WAITING;
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::{events, lanes, pause, remove, resume, retry};
use crate::values::Grammar;

mod cancel;
pub use cancel::cancel;

/// The `meta` field that holds the pause flag, and its value while paused.
const PAUSED: &[u8] = b"paused";
const ON: &[u8] = b"1";

/// `EMQ.RETRY 3 <dead> <pending> <base> <id> <extra_attempts>` → `1`.
pub fn retry(ctx: &Context, args: Args) -> Reply {
    use retry::{DEAD, EXTRA_ATTEMPTS, FORM, ID, PENDING};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (dead, pending) = (DEAD.of(&call), PENDING.of(&call));
    let id = ID.of(&call);

    let extra = EXTRA_ATTEMPTS.read(&call)?;
    gates::job_id(&FORM, id)?;
    let [mut dead, mut pending] = gates::sorted_sets(&db, [dead, pending])?;
    let (mut row, fields) = gates::row(&db, &FORM, &queue.job(id), Fields::All)?;
    if !fields.is(b"dead") || !gates::member(&dead, id)? {
        return Err(errors::not_dead(FORM.verb));
    }

    guard?;
    let budget = (fields.attempts() + extra).to_string();
    moves::remove(&mut dead, id)?;
    let hset: [(&[u8], &[u8]); 2] = [(b"state", b"pending"), (b"max_attempts", budget.as_bytes())];
    row.hset(&hset)?;
    moves::add(&mut pending, fields.priority(), id)?;
    let attempts = fields.attempts().to_string();
    let retrying = Some((&b"delay"[..], &b"0"[..]));
    Bus::open(&db, &queue).job(b"retrying", id, attempts.as_bytes(), retrying)?;
    moves::wake(&db, &queue, 1);
    Ok(ValkeyValue::Integer(1))
}

/// The set a row's `state` names, as an index into `[pending, schedule, done, dead]`, if any.
pub fn home(state: Option<&[u8]>) -> Option<usize> {
    match state? {
        b"pending" => Some(0),
        b"scheduled" => Some(1),
        b"completed" => Some(2),
        b"dead" => Some(3),
        _ => None,
    }
}

/// `EMQ.REMOVE 5 <pending> <schedule> <done> <dead> <base> <id>` → `1` removed, `0` no such job.
/// An id without a row is removed from the sets that hold it.
pub fn remove(ctx: &Context, args: Args) -> Reply {
    use remove::{DEAD, DONE, FORM, ID, PENDING, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let sets = [PENDING, SCHEDULE, DONE, DEAD].map(|key| key.of(&call));
    let id = ID.of(&call);

    gates::job_id(&FORM, id)?;
    let mut sets = gates::sorted_sets(&db, sets)?;
    let mut row = db.open(&queue.job(id));
    match row.kind() {
        Kind::None => return forget(guard, &mut sets, id),
        Kind::Hash => {}
        _ => return Err(errors::wrongtype()),
    }
    let fields = Row::read(&row, Fields::Lease)?;
    if fields.is(b"active") {
        return Err(errors::job_active(FORM.verb));
    }

    // A flow's waiting parent leaves `<base>waiting` (derived from the base, type-gated here).
    let mut waiting = match fields.is(b"waiting") {
        true => Some(gates::sorted_sets(&db, [&queue.key(WAITING)[..]])?),
        false => None,
    };

    guard?;
    if let Some(set) = home(fields.state.as_deref()) {
        moves::remove(&mut sets[set], id)?;
    }
    if let Some([waiting]) = waiting.as_mut() {
        moves::remove(waiting, id)?;
    }
    row.delete()?;
    let attempts = fields.attempts().to_string();
    Bus::open(&db, &queue).job(b"removed", id, attempts.as_bytes(), None)?;
    Ok(ValkeyValue::Integer(1))
}

/// `REMOVE` of an id without a row (an orphan): `ZREM` from each of the open `[pending, schedule,
/// done, dead]` that holds it → `1`; none holds it → `0`, nothing written.
fn forget(guard: Result<(), Refusal>, sets: &mut [Key; 4], id: &[u8]) -> Reply {
    let mut held = [false; 4];
    for (set, held) in sets.iter().zip(held.iter_mut()) {
        *held = gates::member(set, id)?;
    }
    if !held.contains(&true) {
        return Ok(ValkeyValue::Integer(0));
    }
    guard?;
    for (set, _) in sets.iter_mut().zip(held).filter(|(_, held)| *held) {
        moves::remove(set, id)?;
    }
    Ok(ValkeyValue::Integer(1))
}

/// Type gate on the open `meta` (a hash or absent), then its `paused` field.
fn flag(meta: &Key) -> Result<Option<Vec<u8>>, Refusal> {
    gates::hash(meta)?;
    let [paused] = meta.hash_get([PAUSED])?;
    Ok(paused)
}

/// `EMQ.PAUSE 1 <meta>` → `1` paused now, `0` already paused.
pub fn pause(ctx: &Context, args: Args) -> Reply {
    use pause::{FORM, META};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let mut meta = db.open(META.of(&call));

    if flag(&meta)?.as_deref() == Some(ON) {
        return Ok(ValkeyValue::Integer(0));
    }
    guard?;
    meta.hset(&[(PAUSED, ON)])?;
    let [maxlen] = meta.hash_get([bus::MAXLEN_FIELD])?;
    drop(meta);
    Bus::with(&db, &queue, maxlen.as_deref()).queue(b"paused")?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.RESUME 2 <meta> <pending>` → `1` resumed now (the flag was there), `0` not paused. The
/// wake names how many ids `pending` holds (none published when it holds none).
pub fn resume(ctx: &Context, args: Args) -> Reply {
    use resume::{FORM, META, PENDING};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let mut meta = db.open(META.of(&call));
    gates::hash(&meta)?;
    let ready = gates::sorted_sets(&db, [PENDING.of(&call)])?[0].card()?;

    if flag(&meta)?.is_none() {
        return Ok(ValkeyValue::Integer(0));
    }
    guard?;
    meta.hdel(PAUSED)?;
    drop(meta);
    Bus::open(&db, &queue).queue(b"resumed")?;
    if ready > 0 {
        moves::wake(&db, &queue, ready);
    }
    Ok(ValkeyValue::Integer(1))
}

/// The `meta` field that records a laned queue's lane counts.
const LANES: &[u8] = b"lanes";

/// The lane counts `recorded` holds (counts joined by `,`): tokens that are not *limit* text
/// skipped, repeats counted once, ascending.
pub fn recorded_lanes(recorded: &[u8]) -> Vec<i64> {
    let mut counts: Vec<i64> = Vec::new();
    for token in recorded.split(|&b| b == b',').filter(|t| !t.is_empty()) {
        if let Some(n) = Grammar::Limit.parse(token) {
            if !counts.contains(&n) {
                counts.push(n);
            }
        }
    }
    counts.sort_unstable();
    counts
}

/// `EMQ.LANES 1 <meta> <lanes>` → every lane count recorded, ascending; `<lanes>` is recorded
/// when it was not.
pub fn lanes(ctx: &Context, args: Args) -> Reply {
    use lanes::{FORM, LANES as COUNT, META};
    let argv = argv(args);
    let (call, _) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let count = COUNT.read(&call)?;
    let mut meta = db.open(META.of(&call));
    gates::hash(&meta)?;
    let [recorded] = meta.hash_get([LANES])?;
    let mut counts = recorded_lanes(recorded.as_deref().unwrap_or_default());

    if !counts.contains(&count) {
        guard?;
        counts.push(count);
        counts.sort_unstable();
        let text = counts
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        meta.hset(&[(LANES, text.as_bytes())])?;
    }
    Ok(ValkeyValue::Array(
        counts.into_iter().map(ValkeyValue::Integer).collect(),
    ))
}

/// `EMQ.EVENTS 1 <meta> <maxlen> <maxage_ms>` → `1`: the queue's bus settings, in its `meta`.
pub fn events(ctx: &Context, args: Args) -> Reply {
    use events::{FORM, MAXAGE_MS, MAXLEN, META};
    let argv = argv(args);
    let (call, _) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    MAXLEN.read(&call)?;
    MAXAGE_MS.read(&call)?;
    let mut meta = db.open(META.of(&call));
    gates::hash(&meta)?;

    guard?;
    let settings: [(&[u8], &[u8]); 2] = [
        (bus::MAXLEN_FIELD, MAXLEN.of(&call)),
        (bus::MAXAGE_FIELD, MAXAGE_MS.of(&call)),
    ];
    meta.hset(&settings)?;
    Ok(ValkeyValue::Integer(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_lanes_skip_what_is_no_count() {
        assert_eq!(recorded_lanes(b""), Vec::<i64>::new());
        assert_eq!(recorded_lanes(b"12,1,3"), vec![1, 3, 12]);
        assert_eq!(recorded_lanes(b"3,,3,x,01,0,10001,-2,5"), vec![3, 5]);
        assert_eq!(recorded_lanes(b"10000"), vec![10000]);
    }

    #[test]
    fn a_state_names_its_set() {
        assert_eq!(home(Some(b"pending")), Some(0));
        assert_eq!(home(Some(b"scheduled")), Some(1));
        assert_eq!(home(Some(b"completed")), Some(2));
        assert_eq!(home(Some(b"dead")), Some(3));
        assert_eq!(home(Some(b"active")), None);
        assert_eq!(home(Some(b"other")), None);
        assert_eq!(home(None), None);
    }
}

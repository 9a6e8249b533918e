//! Schedules: `EMQ.SCHEDULE` (create or replace a schedule), `EMQ.UNSCHEDULE` (remove it),
//! `EMQ.FIRE` (the job of one instant, compare-and-set on the schedule's next instant), and
//! `EMQ.PAUSESCHEDULE` / `EMQ.RESUMESCHEDULE` (hold a schedule, re-arm it from now).
//!
//! The server computes no instant: the host does, from the spec the record keeps. The record
//! `<base>repeat:<name>` (a hash) holds what the jobs carry, the next instant, the count fired,
//! the last instant fired and `paused`; `repeats` (a sorted set) holds each name at its next
//! instant, or at [`PAUSED_SCORE`] while it is paused (after every instant: no loop finds it due).

use valkey_module::{Context, ValkeyValue};

use crate::bus::Bus;
use crate::clock;
use crate::direct::{Args, Db, Key};
use crate::errors::{Refusal, Reply};
use crate::gates;
use crate::guard;
use crate::keyspace::Queue;
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::{fire, pauseschedule, resumeschedule, schedule, unschedule};
use crate::values::{Grammar, TextGrammar};

/// A paused schedule's score in `repeats`: 2^53 − 1, after every instant.
const PAUSED_SCORE: i64 = 9_007_199_254_740_991;

/// The record's fields that describe a schedule, in the order `EMQ.SCHEDULE` compares them: the
/// [`HELD`] every record holds, then `job_name` and `backoff`, which an older record may lack.
const DESCRIBED: [&[u8]; 9] = [
    b"spec",
    b"payload",
    b"priority",
    b"max_attempts",
    b"timeout",
    b"limit",
    b"end_at",
    b"job_name",
    b"backoff",
];

/// How many of [`DESCRIBED`] every record holds; a later one absent reads as empty.
const HELD: usize = 7;

/// Whether a record's described fields (`stored`, as read; `None` absent) equal the `given` ones:
/// the schedule is unchanged. A `job_name` or `backoff` an older record lacks reads as empty.
fn unchanged(stored: &[Option<Vec<u8>>], given: &[&[u8]]) -> bool {
    stored.len() == given.len()
        && stored
            .iter()
            .zip(given)
            .enumerate()
            .all(|(i, (stored, given))| {
                let empty: &[u8] = b"";
                let stored = match stored.as_deref() {
                    None if i >= HELD => Some(empty),
                    other => other,
                };
                stored == Some(*given)
            })
}

/// `EMQ.SCHEDULE 2 <repeats> <base> <name> <spec> <next> <limit> <end_at> <payload> <priority>
/// <max_attempts> <timeout> <job_name> <backoff>` → `1` created, `2` replaced, `0` unchanged
/// (nothing written).
pub fn schedule(ctx: &Context, args: Args) -> Reply {
    use schedule::{
        BACKOFF, END_AT, FORM, JOB_NAME, LIMIT, MAX_ATTEMPTS, NAME, NEXT, PAYLOAD, PRIORITY,
        REPEATS, SPEC, TIMEOUT,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let name = NAME.read(&call)?;
    NEXT.read(&call)?;
    LIMIT.read(&call)?;
    END_AT.read(&call)?;
    PAYLOAD.read(&call)?;
    PRIORITY.read(&call)?;
    MAX_ATTEMPTS.read(&call)?;
    TIMEOUT.read(&call)?;
    let job_name = JOB_NAME.read(&call)?;
    let backoff = BACKOFF.read(&call)?;
    let given: [&[u8]; 9] = [
        SPEC.of(&call),
        PAYLOAD.of(&call),
        PRIORITY.of(&call),
        MAX_ATTEMPTS.of(&call),
        TIMEOUT.of(&call),
        LIMIT.of(&call),
        END_AT.of(&call),
        job_name,
        backoff,
    ];

    let [mut repeats] = gates::sorted_sets(&db, [REPEATS.of(&call)])?;
    let mut record = db.open(&queue.repeat(name));
    gates::hash(&record)?;
    let existed = record.exists();
    if existed && unchanged(&record.hash_get(DESCRIBED)?, &given) {
        return Ok(ValkeyValue::Integer(0));
    }

    guard?;
    let paused = existed && is_paused(&record)?;
    let mut pairs: Vec<(&[u8], &[u8])> = DESCRIBED.into_iter().zip(given).collect();
    pairs.push((b"next", NEXT.of(&call)));
    if !existed {
        pairs.push((b"fired", b"0"));
    }
    record.hset(&pairs)?;
    let score = if paused {
        PAUSED_SCORE
    } else {
        NEXT.read(&call)?
    };
    moves::add(&mut repeats, score, name)?;
    moves::wake_scheduled(&db, &queue);
    Ok(ValkeyValue::Integer(if existed { 2 } else { 1 }))
}

/// `EMQ.UNSCHEDULE 2 <repeats> <base> <name>` → `1` removed, `0` no such schedule.
pub fn unschedule(ctx: &Context, args: Args) -> Reply {
    use unschedule::{FORM, NAME, REPEATS};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let name = NAME.read(&call)?;
    let [mut repeats] = gates::sorted_sets(&db, [REPEATS.of(&call)])?;
    let mut record = db.open(&queue.repeat(name));
    gates::hash(&record)?;
    if !record.exists() && !gates::member(&repeats, name)? {
        return Ok(ValkeyValue::Integer(0));
    }

    guard?;
    record.delete()?;
    moves::remove(&mut repeats, name)?;
    Ok(ValkeyValue::Integer(1))
}

/// Whether the record holds `paused` = `1`.
fn is_paused(record: &Key) -> Result<bool, Refusal> {
    let [paused] = record.hash_get([b"paused"])?;
    Ok(paused.as_deref() == Some(b"1"))
}

/// `EMQ.PAUSESCHEDULE 2 <repeats> <base> <name>` → `1` paused now, `2` already paused, `0` no
/// such schedule (nothing written unless `1`).
pub fn pauseschedule(ctx: &Context, args: Args) -> Reply {
    use pauseschedule::{FORM, NAME, REPEATS};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let name = NAME.read(&call)?;
    let [mut repeats] = gates::sorted_sets(&db, [REPEATS.of(&call)])?;
    let mut record = db.open(&queue.repeat(name));
    gates::hash(&record)?;
    if !record.exists() {
        return Ok(ValkeyValue::Integer(0));
    }
    if is_paused(&record)? {
        return Ok(ValkeyValue::Integer(2));
    }

    guard?;
    record.hset(&[(b"paused", b"1")])?;
    moves::add(&mut repeats, PAUSED_SCORE, name)?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.RESUMESCHEDULE 2 <repeats> <base> <name> <next>` → `1` resumed, `3` resumed and ended,
/// `2` not paused, `0` no such schedule (nothing written when `2` or `0`).
pub fn resumeschedule(ctx: &Context, args: Args) -> Reply {
    use resumeschedule::{FORM, NAME, NEXT, REPEATS};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let name = NAME.read(&call)?;
    let next = NEXT.read(&call)?;
    let [mut repeats] = gates::sorted_sets(&db, [REPEATS.of(&call)])?;
    let mut record = db.open(&queue.repeat(name));
    gates::hash(&record)?;
    if !record.exists() {
        return Ok(ValkeyValue::Integer(0));
    }
    let [paused, end_at] = record.hash_get([b"paused", b"end_at"])?;
    if paused.as_deref() != Some(b"1") {
        return Ok(ValkeyValue::Integer(2));
    }

    guard?;
    let end_at = stored(&end_at);
    if next == 0 || (end_at != 0 && next > end_at) {
        record.delete()?;
        moves::remove(&mut repeats, name)?;
        return Ok(ValkeyValue::Integer(3));
    }
    record.hdel(b"paused")?;
    record.hset(&[(b"next", NEXT.of(&call))])?;
    moves::add(&mut repeats, next, name)?;
    moves::wake_scheduled(&db, &queue);
    Ok(ValkeyValue::Integer(1))
}

/// `FIRE`'s replies.
const MISS: i64 = 0;
const ADDED: i64 = 1;
const ADDED_ENDED: i64 = 2;
const NO_JOB: i64 = 3;
const NO_JOB_ENDED: i64 = 4;

/// A number the record stores, read by the *count* grammar; anything else (or absent) reads as 0.
fn stored(value: &Option<Vec<u8>>) -> i64 {
    value
        .as_deref()
        .and_then(|text| Grammar::Count.parse(text))
        .unwrap_or(0)
}

/// A text the record stores, read by the *label* grammar; anything else (or absent) reads as empty.
fn stored_label(value: &Option<Vec<u8>>) -> &[u8] {
    value
        .as_deref()
        .filter(|text| TextGrammar::Label.accepts(text))
        .unwrap_or_default()
}

/// `EMQ.FIRE 5 <row> <pending> <schedule> <repeats> <base> <id> <name> <expected> <instant>
/// <next>` → `0` miss, `1` added, `2` added and ended, `3` no job, `4` no job and ended.
pub fn fire(ctx: &Context, args: Args) -> Reply {
    use fire::{EXPECTED, FORM, ID, INSTANT, NAME, NEXT, PENDING, REPEATS, ROW, SCHEDULE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let id = ID.of(&call);

    let name = NAME.read(&call)?;
    EXPECTED.read(&call)?;
    let instant = INSTANT.read(&call)?;
    let next = NEXT.read(&call)?;

    gates::job_id(&FORM, id)?;
    let [mut pending, mut schedule, mut repeats] = gates::sorted_sets(
        &db,
        [PENDING.of(&call), SCHEDULE.of(&call), REPEATS.of(&call)],
    )?;
    let mut record = db.open(&queue.repeat(name));
    gates::hash(&record)?;
    let [at, fired, limit, end_at, payload, priority, max_attempts, timeout, paused, job_name, backoff] =
        record.hash_get([
            b"next",
            b"fired",
            b"limit",
            b"end_at",
            b"payload",
            b"priority",
            b"max_attempts",
            b"timeout",
            b"paused",
            b"job_name",
            b"backoff",
        ])?;
    if at.as_deref() != Some(EXPECTED.of(&call)) || paused.as_deref() == Some(b"1") {
        return Ok(ValkeyValue::Integer(MISS));
    }

    guard?;
    let (mut fired, limit, end_at) = (stored(&fired), stored(&limit), stored(&end_at));
    let end = |record: &mut Key, repeats: &mut Key, code: i64| -> Reply {
        record.delete()?;
        moves::remove(repeats, name)?;
        Ok(ValkeyValue::Integer(code))
    };
    if (limit != 0 && fired >= limit) || (instant != 0 && end_at != 0 && instant > end_at) {
        return end(&mut record, &mut repeats, NO_JOB_ENDED);
    }

    let mut row = db.open(ROW.of(&call));
    let added = instant != 0 && !row.exists();
    if added {
        let job = Job {
            payload: payload.as_deref().unwrap_or_default(),
            priority: priority.as_deref(),
            max_attempts: stored(&max_attempts),
            timeout: stored(&timeout),
            name: stored_label(&job_name),
            backoff: stored_label(&backoff),
        };
        job.add(
            &db,
            &queue,
            (&mut row, &mut pending, &mut schedule),
            id,
            instant,
        )?;
        fired += 1;
    }

    if next == 0 || (end_at != 0 && next > end_at) || (limit != 0 && fired >= limit) {
        let code = if added { ADDED_ENDED } else { NO_JOB_ENDED };
        return end(&mut record, &mut repeats, code);
    }
    let count = fired.to_string();
    let mut pairs: Vec<(&[u8], &[u8])> =
        vec![(b"next", NEXT.of(&call)), (b"fired", count.as_bytes())];
    if added {
        pairs.push((b"last_fired", INSTANT.of(&call)));
    }
    record.hset(&pairs)?;
    moves::add(&mut repeats, next, name)?;
    Ok(ValkeyValue::Integer(if added { ADDED } else { NO_JOB }))
}

/// What a schedule's job carries, from its record.
struct Job<'r> {
    payload: &'r [u8],
    /// The stored priority; read as `0` unless it is in the *priority* grammar.
    priority: Option<&'r [u8]>,
    max_attempts: i64,
    timeout: i64,
    /// The record's `job_name`, the row's `name` (empty: none).
    name: &'r [u8],
    /// The record's `backoff`, the row's own (empty: none).
    backoff: &'r [u8],
}

impl Job<'_> {
    /// The row as `ADD` writes it; due (`instant` ≤ now) → `pending`, else `schedule` at the
    /// instant; its entry on the bus and its wake.
    fn add(
        &self,
        db: &Db,
        queue: &Queue,
        (row, pending, schedule): (&mut Key, &mut Key, &mut Key),
        id: &[u8],
        instant: i64,
    ) -> Result<(), Refusal> {
        let priority = self
            .priority
            .and_then(|text| Grammar::Priority.parse(text).map(|n| (n, text)));
        let now = clock::now_ms();
        let state: &[u8] = if instant <= now {
            b"pending"
        } else {
            b"scheduled"
        };
        let (max_attempts, timeout) = (self.max_attempts.to_string(), self.timeout.to_string());
        let mut fields: Vec<(&[u8], &[u8])> = vec![
            (b"state", state),
            (b"attempts", b"0"),
            (b"payload", self.payload),
        ];
        if let Some((_, text)) = priority.filter(|(n, _)| *n != 0) {
            fields.push((b"priority", text));
        }
        if self.max_attempts != 0 {
            fields.push((b"max_attempts", max_attempts.as_bytes()));
        }
        if self.timeout != 0 {
            fields.push((b"timeout", timeout.as_bytes()));
        }
        let named: [(&[u8], &[u8]); 2] = [(b"name", self.name), (b"backoff", self.backoff)];
        fields.extend(named.into_iter().filter(|(_, value)| !value.is_empty()));
        row.hset(&fields)?;
        let mut bus = Bus::open(db, queue);
        if instant <= now {
            moves::add(pending, priority.map_or(0, |(n, _)| n), id)?;
            bus.job(b"added", id, b"0", None)?;
            moves::wake(db, queue, 1);
        } else {
            moves::add(schedule, instant, id)?;
            let delay = (instant - now).to_string();
            bus.job(b"delayed", id, b"0", Some((b"delay", delay.as_bytes())))?;
            moves::wake_scheduled(db, queue);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{unchanged, DESCRIBED};

    /// The given fields of one schedule, `job_name` and `backoff` as given.
    fn given<'a>(job_name: &'a [u8], backoff: &'a [u8]) -> [&'a [u8]; 9] {
        [b"{}", b"p", b"0", b"0", b"0", b"0", b"0", job_name, backoff]
    }

    /// A record as read: each field present with the given text, or absent.
    fn record(fields: &[Option<&[u8]>]) -> Vec<Option<Vec<u8>>> {
        fields.iter().map(|f| f.map(<[u8]>::to_vec)).collect()
    }

    #[test]
    fn equal_fields_are_unchanged() {
        let g = given(b"send", b"fixed:5");
        let stored = record(&g.map(Some));
        assert!(unchanged(&stored, &g));
    }

    #[test]
    fn a_new_name_or_backoff_replaces() {
        let stored = record(&given(b"send", b"fixed:5").map(Some));
        assert!(!unchanged(&stored, &given(b"mail", b"fixed:5")));
        assert!(!unchanged(&stored, &given(b"send", b"fixed:6")));
        assert!(!unchanged(&stored, &given(b"", b"fixed:5")));
    }

    #[test]
    fn an_older_record_without_name_or_backoff_reads_as_empty() {
        let mut stored = record(&given(b"", b"").map(Some));
        stored[7] = None;
        stored[8] = None;
        assert!(unchanged(&stored, &given(b"", b"")));
        assert!(!unchanged(&stored, &given(b"send", b"")));
        assert!(!unchanged(&stored, &given(b"", b"fixed:5")));
    }

    #[test]
    fn an_absent_held_field_is_a_change() {
        for held in 0..7 {
            let mut stored = record(&given(b"", b"").map(Some));
            stored[held] = None;
            let mut g = given(b"", b"");
            g[held] = b"";
            assert!(!unchanged(&stored, &g), "{:?}", DESCRIBED[held]);
        }
    }
}

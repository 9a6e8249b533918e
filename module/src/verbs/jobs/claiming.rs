//! The claim: `EMQ.CLAIM`, the claim `EMQ.BCLAIM` runs ([`lease_head`]) and the one a
//! settlement runs after its own writes ([`lease_next`]): the head of `pending` leased into
//! `active` under the queue's flow control, orphans ahead of it dropped.

use valkey_module::{Context, ValkeyValue};

use crate::bus::{self, Bus};
use crate::clock;
use crate::direct::{Args, Db, Key, Kind, When, Zadd};
use crate::errors::{self, Refusal, Reply};
use crate::gates;
use crate::guard;
use crate::keyspace::{is_job_id, Queue};
use crate::limits;
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::claim;
use crate::shape::Form;
use crate::values::{Grammar, Number};

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
    let sets = (PENDING.of(&call), ACTIVE.of(&call));

    let lease = how.lease.read(&call)?;
    let timeout = how.timeout.map_or(Ok(0), |value| value.read(&call))?;
    Ok((
        lease_next(ctx, &db, form, &queue, sets, (lease, true), guard)?,
        timeout,
    ))
}

/// `EMQ.CLAIM`'s claim from the pause read on, as `form`'s verb, its values read: the leased
/// job's reply, the limited claim's integer, or `None` (nothing to claim: an empty or paused
/// queue). `EMQ.COMPLETENEXT` and `EMQ.FAILNEXT` run it after their settlement. `announce`
/// false: no `active` entry (`EMQ.COMPLETENEXT` writes the lease into its `completed` entry).
pub fn lease_next(
    ctx: &Context,
    db: &Db,
    form: &Form,
    queue: &Queue,
    (pending, active): (&[u8], &[u8]),
    (lease, announce): (i64, bool),
    guard: Result<(), Refusal>,
) -> Result<Option<ValkeyValue>, Refusal> {
    let (paused, maxlen, limited) = flags(db, queue)?;
    if paused {
        return Ok(None);
    }

    let [mut pending, mut active] = gates::sorted_sets(db, [pending, active])?;
    let limits = limits::Limits::read(db, queue, limited)?;
    let now = clock::now_ms();
    let queue_window = match limits::queue_gate(db, queue, &active, &limits, now)? {
        Err(wait) => return Ok(Some(ValkeyValue::Integer(wait))),
        Ok(held) => limits.rate.on().then_some(held),
    };
    let mut scan = heads(db, queue, &pending, &limits, now)?;
    let Some(Head { id, mut row, group }) = scan.head.take() else {
        if !scan.skipped() {
            return Ok(None);
        }
        guard?;
        skip(db, queue, &mut pending, &scan)?;
        if scan.bounded && scan.held_back() {
            return Ok(Some(ValkeyValue::Integer(1)));
        }
        return Ok(None);
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
    let deadline = now + lease;
    if active.zadd_when(When::New, deadline, &id)? == Zadd::Skipped {
        return Err(errors::head_already_active(form.verb));
    }
    skip(db, queue, &mut pending, &scan)?;
    write_check(form, pending.zrem(&id)?)?;
    let attempts_text = attempts.to_string();
    // processed_on: when this attempt's lease was granted (the now its deadline is counted from).
    let processed_on = now.to_string();
    let lease_fields: [(&[u8], &[u8]); 4] = [
        (b"state", b"active"),
        (b"attempts", attempts_text.as_bytes()),
        (b"processed_on", processed_on.as_bytes()),
        (b"lease_epoch", clock::run_id(ctx)),
    ];
    row.hset(&lease_fields)?;
    drop(row);
    let group = group.as_ref().map(|(g, n, w)| (&g[..], *n, *w));
    limits::count_claim(db, queue, queue_window, group, now)?;
    if announce {
        let mut bus = Bus::with(db, queue, maxlen.as_deref());
        bus.job(b"active", &id, attempts_text.as_bytes(), None)?;
    }

    let reply = ValkeyValue::Array(vec![
        ValkeyValue::StringBuffer(id),
        payload.map_or(ValkeyValue::Null, ValkeyValue::StringBuffer),
        ValkeyValue::Integer(attempts),
        ValkeyValue::Integer(deadline),
        ValkeyValue::Integer(timeout_ms),
    ]);
    Ok(Some(reply))
}

/// The most orphans one claim drops.
pub const MAX_ORPHANS: usize = 100;

/// The head a claim takes: its id, its row (open for the claim's writes) and, when the row has
/// a `group`, the group with its active count and window ([`limits::Verdict::Claim`]).
struct Head<'d> {
    id: Vec<u8>,
    row: Key<'d>,
    group: Option<(Vec<u8>, i64, Option<Option<i64>>)>,
}

/// What a claim's scan of `pending` found: the ids it passes over, lowest first — orphans,
/// heads parked by their group's concurrency (id, group, priority), heads delayed by their
/// group's rate (id, due) — at most [`MAX_ORPHANS`] in all; the head it takes, if any; whether
/// it stopped at the bound with ids still behind.
#[derive(Default)]
struct Scan<'d> {
    orphans: Vec<Vec<u8>>,
    parks: Vec<(Vec<u8>, Vec<u8>, i64)>,
    delays: Vec<(Vec<u8>, i64)>,
    head: Option<Head<'d>>,
    bounded: bool,
}

impl Scan<'_> {
    fn count(&self) -> usize {
        self.orphans.len() + self.parks.len() + self.delays.len()
    }

    fn skipped(&self) -> bool {
        self.count() > 0
    }

    fn held_back(&self) -> bool {
        !self.parks.is_empty() || !self.delays.is_empty()
    }
}

/// What one id of `pending` is to the claim.
enum Seen<'d> {
    Orphan,
    Take(Head<'d>),
    Park(Vec<u8>, i64),
    Delay(i64),
}

/// The claimable head of the open `pending` — a `JOB` id whose row is a hash (the row open for
/// the claim's writes), not held back by its group ([`limits::judge`]) — and the ids passed over
/// ahead of it, at most [`MAX_ORPHANS`]. Reads only.
fn heads<'d>(
    db: &'d Db,
    queue: &Queue,
    pending: &Key,
    limits: &limits::Limits,
    now: i64,
) -> Result<Scan<'d>, Refusal> {
    let mut scan = Scan::default();
    // The usual case first: the head is claimable (one id read, its row opened once).
    let mut ids = pending.first(1)?;
    let mut at = 0;
    loop {
        if at == ids.len() {
            if at != 1 {
                break;
            }
            ids = pending.first(MAX_ORPHANS + 1)?;
            if at == ids.len() {
                break;
            }
        }
        let id = std::mem::take(&mut ids[at]);
        at += 1;
        let seen = seen(db, queue, id.clone(), limits, now)?;
        if let Seen::Take(head) = seen {
            scan.head = Some(head);
            break;
        }
        if scan.count() == MAX_ORPHANS {
            scan.bounded = true;
            break;
        }
        match seen {
            Seen::Orphan => scan.orphans.push(id),
            Seen::Park(g, priority) => scan.parks.push((id, g, priority)),
            Seen::Delay(due) => scan.delays.push((id, due)),
            Seen::Take(_) => unreachable!(),
        }
    }
    Ok(scan)
}

/// One id of `pending` as the claim sees it: `HMGET <row> group priority` on a claimable row,
/// then its group's verdict.
fn seen<'d>(
    db: &'d Db,
    queue: &Queue,
    id: Vec<u8>,
    limits: &limits::Limits,
    now: i64,
) -> Result<Seen<'d>, Refusal> {
    let Some(row) = claimable(db, queue, &id) else {
        return Ok(Seen::Orphan);
    };
    let [group, priority] = row.hash_get([b"group", b"priority"])?;
    let Some(g) = group.filter(|g| !g.is_empty()) else {
        return Ok(Seen::Take(Head {
            id,
            row,
            group: None,
        }));
    };
    Ok(match limits::judge(db, queue, limits, &g, now)? {
        limits::Verdict::Claim(n, window) => Seen::Take(Head {
            row,
            id,
            group: Some((g, n, window)),
        }),
        limits::Verdict::Park => {
            let priority = priority
                .and_then(|p| Grammar::Priority.parse(&p))
                .unwrap_or(0);
            Seen::Park(g, priority)
        }
        limits::Verdict::Delay(due) => Seen::Delay(due),
    })
}

/// The row of `id`, open for the claim's writes, when `id` is a `JOB` id whose row is a hash.
fn claimable<'d>(db: &'d Db, queue: &Queue, id: &[u8]) -> Option<Key<'d>> {
    if !is_job_id(id) {
        return None;
    }
    let row = db.open(&queue.job(id));
    (row.kind() == Kind::Hash).then_some(row)
}

/// The ids a claim passed over leave `pending`: the orphans ([`drop_orphans`]), the parked
/// ([`limits::park`]) and the delayed ([`limits::delay`], then wake `0`), in that order.
fn skip(db: &Db, queue: &Queue, pending: &mut Key, scan: &Scan) -> Result<(), Refusal> {
    drop_orphans(db, queue, pending, &scan.orphans)?;
    for (id, g, priority) in &scan.parks {
        limits::park(db, queue, pending, id, g, *priority)?;
    }
    for (id, due) in &scan.delays {
        limits::delay(db, queue, pending, id, *due)?;
    }
    if !scan.delays.is_empty() {
        moves::wake_scheduled(db, queue);
    }
    Ok(())
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
pub(super) fn empty() -> ValkeyValue {
    ValkeyValue::Array(Vec::new())
}

/// Whether the queue's `meta` hash has `paused` = `1`, its `events_maxlen` as stored, and
/// whether it has `limits` = `1` (the queue has limits: flow control) (`HMGET <meta> paused
/// events_maxlen limits`).
type Flags = (bool, Option<Vec<u8>>, bool);
pub(super) fn flags(db: &Db, queue: &Queue) -> Result<Flags, Refusal> {
    let [flag, maxlen, limited] =
        db.read(&queue.meta())
            .hash_get([b"paused", bus::MAXLEN_FIELD, limits::LIMITED])?;
    let on = |v: &Option<Vec<u8>>| v.as_deref() == Some(b"1");
    Ok((on(&flag), maxlen, on(&limited)))
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

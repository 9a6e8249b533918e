//! Flow control (docs/protocol.md, "Flow control"): the claim's limits and the release every
//! transition that takes a job out of `active` runs — the same steps as the scripts'.
//!
//! Keys, all derived from the queue's base: `<base>limits` (hash: `concurrency`, `rate_max`,
//! `rate_ms`, the groups' defaults `group_concurrency`, `group_rate_max`, `group_rate_ms`, and a
//! group's own `concurrency:<g>`, `rate_max:<g>`, `rate_ms:<g>`), `<base>rate` (hash: the fixed
//! windows, `start`/`count` for the queue, `start:<g>`/`count:<g>` per group), `<base>groups`
//! (hash: each group's active count), `<base>group:<g>` (sorted set: the group's parked ids,
//! score = priority) and `<base>parked` (sorted set: the groups with parked ids). A stored limit
//! or window field is read as a *count*, else 0 (none).

use crate::direct::{Db, Key};
use crate::errors::Refusal;
use crate::keyspace::{Queue, GROUPS, LIMITS, PARKED, PENDING, RATE, SCHEDULE};
use crate::moves;
use crate::values::Grammar;

/// The `<base>meta` field that says the queue has limits (`1`), kept by `LIMIT`: a claim reads
/// `<base>limits` only then, so a queue without limits pays nothing for them.
pub const LIMITED: &[u8] = b"limits";

/// A stored field as a *count*, else 0.
fn num(stored: Option<&[u8]>) -> i64 {
    stored
        .and_then(|text| Grammar::Count.parse(text))
        .unwrap_or(0)
}

/// `<base><kind><g>` as a hash field name: `<kind><g>`.
fn field(kind: &[u8], g: &[u8]) -> Vec<u8> {
    [kind, g].concat()
}

/// A rate: `max` jobs started per window of `ms` (both > 0, else none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rate {
    pub max: i64,
    pub ms: i64,
}

impl Rate {
    fn of(max: Option<&[u8]>, ms: Option<&[u8]>) -> Rate {
        Rate {
            max: num(max),
            ms: num(ms),
        }
    }

    pub fn on(self) -> bool {
        self.max > 0 && self.ms > 0
    }
}

/// A queue's limits: `HMGET <base>limits concurrency rate_max rate_ms group_concurrency
/// group_rate_max group_rate_ms`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// The queue has limits (`<base>meta` [`LIMITED`] = `1`): the hash was read.
    pub on: bool,
    pub concurrency: i64,
    pub rate: Rate,
    pub group_concurrency: i64,
    pub group_rate: Rate,
}

impl Limits {
    /// None when `limited` is false (the meta flag is not `1`): nothing is read.
    pub fn read(db: &Db, queue: &Queue, limited: bool) -> Result<Limits, Refusal> {
        if !limited {
            return Ok(Limits::default());
        }
        let [c, max, ms, gc, gmax, gms] = db.read(&queue.key(LIMITS)).hash_get([
            b"concurrency",
            b"rate_max",
            b"rate_ms",
            b"group_concurrency",
            b"group_rate_max",
            b"group_rate_ms",
        ])?;
        Ok(Limits {
            on: true,
            concurrency: num(c.as_deref()),
            rate: Rate::of(max.as_deref(), ms.as_deref()),
            group_concurrency: num(gc.as_deref()),
            group_rate: Rate::of(gmax.as_deref(), gms.as_deref()),
        })
    }
}

/// A fixed window's state: the ms until it opens (0: open), and the count it holds while
/// running (`None`: the next claim starts it).
type Window = (i64, Option<i64>);

/// The window of `<base>rate` fields `start`/`count` (`suffix` appended: a group's) under `rate`
/// at `now`: `HMGET <base>rate start<suffix> count<suffix>`.
fn window(db: &Db, queue: &Queue, suffix: &[u8], rate: Rate, now: i64) -> Result<Window, Refusal> {
    let [start, count] = db
        .read(&queue.key(RATE))
        .hash_get([&field(b"start", suffix)[..], &field(b"count", suffix)[..]])?;
    let Some(start) = start.and_then(|t| Grammar::Count.parse(&t)) else {
        return Ok((0, None));
    };
    if now >= start + rate.ms {
        return Ok((0, None));
    }
    let held = num(count.as_deref());
    let wait = if held >= rate.max {
        start + rate.ms - now
    } else {
        0
    };
    Ok((wait, Some(held)))
}

/// The queue's own gate before any head is looked at: `Err(wait)` when the claim is limited
/// (0: the concurrency is full — `ZCARD <active>`; n > 0: the rate window opens in n ms), else
/// the queue window's count while running (`None` without a rate or to start one).
pub fn queue_gate(
    db: &Db,
    queue: &Queue,
    active: &Key,
    limits: &Limits,
    now: i64,
) -> Result<Result<Option<i64>, i64>, Refusal> {
    if limits.concurrency > 0 && active.card()? >= limits.concurrency {
        return Ok(Err(0));
    }
    if !limits.rate.on() {
        return Ok(Ok(None));
    }
    let (wait, held) = window(db, queue, b"", limits.rate, now)?;
    Ok(if wait > 0 { Err(wait) } else { Ok(held) })
}

/// A claimed job's group: its name, its active count before the claim, and its window when it
/// has a rate (`Some(None)`: the claim starts one).
pub type Claimed<'a> = (&'a [u8], i64, Option<Option<i64>>);

/// What flow control says of a head whose row has a `group`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Claim it: the group's active count, and its window when it has a rate (`Some(None)`:
    /// the claim starts one).
    Claim(i64, Option<Option<i64>>),
    /// Over the group's concurrency: park it.
    Park,
    /// Over the group's rate: to `schedule` at this due time.
    Delay(i64),
}

/// The verdict on a head of group `g`: its own limits (`HMGET <base>limits concurrency:<g>
/// rate_max:<g> rate_ms:<g>`; a rate of its own when either rate field is set) else the
/// defaults; its active count (`HGET <base>groups <g>`); then concurrency before rate.
pub fn judge(
    db: &Db,
    queue: &Queue,
    limits: &Limits,
    g: &[u8],
    now: i64,
) -> Result<Verdict, Refusal> {
    let [c, max, ms] = if limits.on {
        db.read(&queue.key(LIMITS)).hash_get([
            &field(b"concurrency:", g)[..],
            &field(b"rate_max:", g)[..],
            &field(b"rate_ms:", g)[..],
        ])?
    } else {
        [None, None, None]
    };
    let concurrency = c
        .as_deref()
        .map_or(limits.group_concurrency, |t| num(Some(t)));
    let rate = if max.is_some() || ms.is_some() {
        Rate::of(max.as_deref(), ms.as_deref())
    } else {
        limits.group_rate
    };
    let [n] = db.read(&queue.key(GROUPS)).hash_get([g])?;
    let n = num(n.as_deref());
    if concurrency > 0 && n >= concurrency {
        return Ok(Verdict::Park);
    }
    if !rate.on() {
        return Ok(Verdict::Claim(n, None));
    }
    let (wait, held) = window(db, queue, &field(b":", g), rate, now)?;
    Ok(if wait > 0 {
        Verdict::Delay(now + wait)
    } else {
        Verdict::Claim(n, Some(held))
    })
}

/// A head over its group's concurrency leaves `pending` for the group's parked set:
/// `ZREM <pending> <id>`, `ZADD <base>group:<g> <priority> <id>`, `ZADD <base>parked 0 <g>`.
pub fn park(
    db: &Db,
    queue: &Queue,
    pending: &mut Key,
    id: &[u8],
    g: &[u8],
    priority: i64,
) -> Result<(), Refusal> {
    moves::remove(pending, id)?;
    moves::add(&mut db.open(&queue.group(g)), priority, id)?;
    moves::add(&mut db.open(&queue.key(PARKED)), 0, g)
}

/// A head over its group's rate waits in `schedule` for the window's end: `ZREM <pending>
/// <id>`, `HSET <row> state scheduled`, `ZADD <base>schedule <due> <id>`.
pub fn delay(
    db: &Db,
    queue: &Queue,
    pending: &mut Key,
    id: &[u8],
    due: i64,
) -> Result<(), Refusal> {
    moves::remove(pending, id)?;
    moves::set_state(&mut db.open(&queue.job(id)), b"scheduled")?;
    moves::add(&mut db.open(&queue.key(SCHEDULE)), due, id)
}

/// A claim counts in its windows and its group: `HSET <base>groups <g> <n + 1>`; per window,
/// `HSET <base>rate count<suffix> <held + 1>` while running, else `HSET <base>rate
/// start<suffix> <now> count<suffix> 1`.
pub fn count_claim(
    db: &Db,
    queue: &Queue,
    queue_window: Option<Option<i64>>,
    group: Option<Claimed>,
    now: i64,
) -> Result<(), Refusal> {
    if let Some((g, n, _)) = group {
        db.open(&queue.key(GROUPS))
            .hset(&[(g, (n + 1).to_string().as_bytes())])?;
    }
    let mut windows: Vec<(Vec<u8>, Option<i64>)> = Vec::new();
    if let Some(held) = queue_window {
        windows.push((Vec::new(), held));
    }
    if let Some((g, _, Some(held))) = group {
        windows.push((field(b":", g), held));
    }
    if windows.is_empty() {
        return Ok(());
    }
    let mut rate = db.open(&queue.key(RATE));
    for (suffix, held) in windows {
        let count = field(b"count", &suffix);
        match held {
            Some(held) => rate.hset(&[(&count[..], (held + 1).to_string().as_bytes())])?,
            None => {
                let start = field(b"start", &suffix);
                let now = now.to_string();
                rate.hset(&[(&start[..], now.as_bytes()), (&count[..], b"1")])?;
            }
        }
    }
    Ok(())
}

/// `left` ids left `active`, of the groups `groups` (one entry per id that had one). Per group:
/// its active count drops by one (`HSET <base>groups <g> <n - 1>`, `HDEL` from 1 or when not a
/// count) and its lowest parked id goes back to `pending` (`ZADD <pending> <score> <id>`, `ZREM
/// <base>group:<g> <id>`, `ZREM <base>parked <g>` once emptied). Then wake `<moved>`, or wake 1
/// when none moved and the queue has a concurrency limit. Never refuses: a key of another type
/// is passed over. `pending`: the verb's open `pending`, else it is opened here when needed.
pub fn release<'d>(
    db: &'d Db,
    queue: &Queue,
    pending: Option<&mut Key<'d>>,
    groups: &[Vec<u8>],
    left: i64,
) {
    let mut own: Option<Key<'d>> = None;
    let mut pending = pending;
    let mut moved = 0;
    for g in groups {
        {
            let mut counts = db.open(&queue.key(GROUPS));
            if let Ok([n]) = counts.hash_get([&g[..]]) {
                let n = n.and_then(|t| Grammar::Count.parse(&t)).unwrap_or(0);
                let _ = if n > 1 {
                    counts.hset(&[(g, (n - 1).to_string().as_bytes())])
                } else {
                    counts.hdel(g).map(drop)
                };
            }
        }
        let mut parked = db.open(&queue.group(g));
        let Ok(first) = parked.first(1) else { continue };
        let Some(id) = first.into_iter().next() else {
            continue;
        };
        let Ok(Some(score)) = parked.score(&id) else {
            continue;
        };
        let target: &mut Key = match pending.as_deref_mut() {
            Some(open) => open,
            None => own.get_or_insert_with(|| db.open(&queue.key(PENDING))),
        };
        if target.zadd(score as i64, &id).is_err() {
            continue;
        }
        let _ = parked.zrem(&id);
        if !parked.exists() {
            let _ = db.open(&queue.key(PARKED)).zrem(g);
        }
        moved += 1;
    }
    drop(own);
    if moved > 0 {
        moves::wake(db, queue, moved);
    } else if left > 0 && limited(db, queue) {
        let limit = db.read(&queue.key(LIMITS)).hash_get([b"concurrency"]);
        if let Ok([c]) = limit {
            if num(c.as_deref()) > 0 {
                moves::wake(db, queue, 1);
            }
        }
    }
}

/// The parked ids `DRAIN` takes after `pending` and `schedule`: group by group in `<base>parked`'s
/// order (`ZRANGE <base>parked 0 -1`), from each group's set its first ids (`ZRANGE
/// <base>group:<g> 0 <room - 1>`), `room` in all. A key of another type holds none.
pub fn parked_picks(db: &Db, queue: &Queue, mut room: usize) -> Vec<(Vec<u8>, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    if room == 0 {
        return out;
    }
    let groups = db
        .read(&queue.key(PARKED))
        .first(usize::MAX)
        .unwrap_or_default();
    for g in groups {
        if room == 0 {
            break;
        }
        let ids = db.read(&queue.group(&g)).first(room).unwrap_or_default();
        if !ids.is_empty() {
            room -= ids.len();
            out.push((g, ids));
        }
    }
    out
}

/// The parked ids `DRAIN` picked are deleted: `ZREM <base>group:<g> <id>`, `DEL <row>` each, and
/// `ZREM <base>parked <g>` for a set emptied.
pub fn drop_parked(
    db: &Db,
    queue: &Queue,
    picks: &[(Vec<u8>, Vec<Vec<u8>>)],
) -> Result<(), Refusal> {
    for (g, ids) in picks {
        let mut set = db.open(&queue.group(g));
        for id in ids {
            moves::remove(&mut set, id)?;
            db.del(&queue.job(id))?;
        }
        if !set.exists() {
            drop(set);
            moves::remove(&mut db.open(&queue.key(PARKED)), g)?;
        }
    }
    Ok(())
}

/// Whether `<base>meta` says the queue has limits ([`LIMITED`] = `1`; a meta of another type: no).
fn limited(db: &Db, queue: &Queue) -> bool {
    matches!(db.read(&queue.meta()).hash_get([LIMITED]), Ok([Some(v)]) if v == b"1")
}

/// Whether any of the queue's flow-control keys exists (`limits`, `rate`, `groups`, `parked`).
pub fn present(db: &Db, queue: &Queue) -> bool {
    [LIMITS, RATE, GROUPS, PARKED]
        .iter()
        .any(|kind| db.read(&queue.key(kind)).exists())
}

/// A queue deleted (`OBLITERATE`'s last call): for each group of `<base>parked` its parked ids'
/// rows and its parked set (`DEL` each; a key of another type holds no ids), then `DEL` of
/// `limits`, `rate`, `groups` and `parked`.
pub fn forget(db: &Db, queue: &Queue) -> Result<(), Refusal> {
    let groups = db
        .read(&queue.key(PARKED))
        .first(usize::MAX)
        .unwrap_or_default();
    for g in groups {
        let key = queue.group(&g);
        let ids = db.read(&key).first(usize::MAX).unwrap_or_default();
        for id in ids {
            db.del(&queue.job(&id))?;
        }
        db.del(&key)?;
    }
    for kind in [LIMITS, RATE, GROUPS, PARKED] {
        db.del(&queue.key(kind))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_limits_are_counts_else_none() {
        assert_eq!(num(Some(b"10")), 10);
        assert_eq!(num(Some(b"0")), 0);
        assert_eq!(num(Some(b"-1")), 0);
        assert_eq!(num(Some(b"x")), 0);
        assert_eq!(num(None), 0);
        assert!(Rate { max: 1, ms: 1 }.on());
        assert!(!Rate { max: 1, ms: 0 }.on());
    }
}

//! The event bus (docs/protocol.md, "The event bus"): each transition appends its entries to its
//! queue's stream `emq:{q}:events`, derived from the queue like `meta` (same hashtag), each
//! `XADD <events> MAXLEN ~ <maxlen> * event <kind> [id <id> attempt <n>] [<field> <value>]`.
//!
//! The queue's settings live in its `meta`: `events_maxlen` (a *count*, else 10000; `0` turns
//! the bus off) and `events_maxage` (ms, a *count*, else 24 h; `0`: no age bound), which
//! `PROMOTE` and `REAP` apply once per call with `XTRIM <events> MINID ~ <now - maxage>`. A
//! `meta` that is not a hash reads as the defaults; an events key of another type gets no entry
//! and no trim. The bus never refuses a transition.

use crate::direct::{Db, Key};
use crate::errors::Refusal;
use crate::keyspace::{Queue, EVENTS};
use crate::values::Grammar;

/// The `meta` fields that hold the settings.
pub const MAXLEN_FIELD: &[u8] = b"events_maxlen";
pub const MAXAGE_FIELD: &[u8] = b"events_maxage";
/// The settings of a queue whose `meta` has none.
pub const DEFAULT_MAXLEN: i64 = 10_000;
pub const DEFAULT_MAXAGE_MS: i64 = 86_400_000;
/// The longest `reason` an entry carries (the error's first bytes) and the longest progress
/// value an entry carries as `data`.
pub const SHORT: usize = 200;
/// The longest result a `completed` entry carries (a longer one: no `result` field).
pub const RESULT_MAX: usize = 1024;

/// A setting as stored: a *count*, else the default.
pub fn setting(stored: Option<&[u8]>, default: i64) -> i64 {
    stored
        .and_then(|text| Grammar::Count.parse(text))
        .unwrap_or(default)
}

/// `bytes`, cut to its first [`SHORT`] bytes.
pub fn short(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.len().min(SHORT)]
}

/// One transition's bus: the queue's events stream (open when entries or a trim may be
/// written) and its length bound.
pub struct Bus<'d> {
    events: Option<Key<'d>>,
    maxlen: i64,
    /// The age trim's bound (`<ms>`, as `MINID <ms>-0`) when it has something to delete.
    trim: Option<u64>,
}

impl<'d> Bus<'d> {
    /// The bus of a transition: `HGET <meta> events_maxlen`.
    pub fn open(db: &'d Db, queue: &Queue) -> Bus<'d> {
        let stored = db
            .read(&queue.meta())
            .hash_get([MAXLEN_FIELD])
            .ok()
            .and_then(|[maxlen]| maxlen);
        Bus::with(db, queue, stored.as_deref())
    }

    /// The bus with `events_maxlen` as read already (`CLAIM` reads it with the pause flag).
    pub fn with(db: &'d Db, queue: &Queue, stored: Option<&[u8]>) -> Bus<'d> {
        let maxlen = setting(stored, DEFAULT_MAXLEN);
        let events = (maxlen > 0).then(|| db.open(&queue.key(EVENTS)));
        Bus {
            events,
            maxlen,
            trim: None,
        }
    }

    /// The bus of a housekeeping call (`PROMOTE`, `REAP`) at server time `now`: `HMGET <meta>
    /// events_maxlen events_maxage`, and whether the age trim has something to delete (the
    /// stream's first entry is older than `now - maxage`).
    pub fn housekeeping(db: &'d Db, queue: &Queue, now: i64) -> Bus<'d> {
        let [maxlen, maxage] = db
            .read(&queue.meta())
            .hash_get([MAXLEN_FIELD, MAXAGE_FIELD])
            .unwrap_or_default();
        let maxage = setting(maxage.as_deref(), DEFAULT_MAXAGE_MS);
        let events = db.open(&queue.key(EVENTS));
        let bound = (maxage > 0 && now - maxage > 0).then(|| (now - maxage) as u64);
        let trim = bound.filter(|&ms| events.first_id().is_some_and(|(first, _)| first < ms));
        Bus {
            events: Some(events),
            maxlen: setting(maxlen.as_deref(), DEFAULT_MAXLEN),
            trim,
        }
    }

    /// Whether the age trim will write (the caller passes its write guard first).
    pub fn stale(&self) -> bool {
        self.trim.is_some()
    }

    /// The age trim, once: `XTRIM <events> MINID ~ <now - maxage>`.
    pub fn trim(&mut self) -> Result<(), Refusal> {
        match (self.trim.take(), self.events.as_mut()) {
            (Some(ms), Some(events)) => events.xtrim_minid(ms),
            _ => Ok(()),
        }
    }

    /// A job's entry: `event <kind> id <id> attempt <attempt>`, then `extra` (a field and its
    /// value), if any.
    pub fn job(
        &mut self,
        kind: &[u8],
        id: &[u8],
        attempt: &[u8],
        extra: Option<(&[u8], &[u8])>,
    ) -> Result<(), Refusal> {
        let head: [&[u8]; 6] = [b"event", kind, b"id", id, b"attempt", attempt];
        match extra {
            None => self.emit(&head),
            Some((field, value)) => {
                let [a, b, c, d, e, f] = head;
                self.emit(&[a, b, c, d, e, f, field, value])
            }
        }
    }

    /// A job's entry with any number of fields after `attempt` (`completed`: `result`, then
    /// `next` and `next_attempt` when the same call leased the queue's next job).
    pub fn job_with(
        &mut self,
        kind: &[u8],
        id: &[u8],
        attempt: &[u8],
        fields: &[(&[u8], &[u8])],
    ) -> Result<(), Refusal> {
        let mut all: Vec<&[u8]> = Vec::with_capacity(6 + 2 * fields.len());
        all.extend([&b"event"[..], kind, b"id", id, b"attempt", attempt]);
        for (field, value) in fields {
            all.extend([*field, *value]);
        }
        self.emit(&all)
    }

    /// The queue's entry: `event <kind>` (`paused`, `resumed`).
    pub fn queue(&mut self, kind: &[u8]) -> Result<(), Refusal> {
        self.emit(&[b"event", kind])
    }

    /// The queue's entry with fields: `event <kind> <field> <value>…` (`cleaned`, `drained`).
    pub fn queue_with(&mut self, kind: &[u8], fields: &[(&[u8], &[u8])]) -> Result<(), Refusal> {
        let mut all: Vec<&[u8]> = Vec::with_capacity(2 + 2 * fields.len());
        all.extend([&b"event"[..], kind]);
        for (field, value) in fields {
            all.extend([*field, *value]);
        }
        self.emit(&all)
    }

    fn emit(&mut self, fields: &[&[u8]]) -> Result<(), Refusal> {
        match self.events.as_mut() {
            Some(events) if self.maxlen > 0 => events.xadd(self.maxlen, fields).map(drop),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_counts_else_the_default() {
        assert_eq!(setting(None, DEFAULT_MAXLEN), 10_000);
        assert_eq!(setting(Some(b"0"), DEFAULT_MAXLEN), 0);
        assert_eq!(setting(Some(b"25"), DEFAULT_MAXLEN), 25);
        for bad in [&b"-1"[..], b"01", b"x", b"", b"1.5", b"1000000000000000"] {
            assert_eq!(setting(Some(bad), DEFAULT_MAXAGE_MS), 86_400_000, "{bad:?}");
        }
    }

    #[test]
    fn short_cuts_at_200_bytes() {
        assert_eq!(short(b"boom"), b"boom");
        let long = [b'x'; 500];
        assert_eq!(short(&long).len(), 200);
        assert_eq!(short(&long[..200]).len(), 200);
        assert_eq!(short(b""), b"");
    }
}

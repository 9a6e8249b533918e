//! The shared gates: id gate, type gate, row gate, lease gate.
//!
//! Each gate only reads; a refusal leaves the keyspace as it was.

use crate::direct::{Db, Key, Kind};
use crate::errors::{self, Refusal};
use crate::keyspace::is_job_id;
use crate::shape::Form;
use crate::values::Grammar;

/// Id gate: the id's first three bytes are `JOB`, else `ERR EMQ.<VERB> id must start with JOB`.
pub fn job_id(form: &Form, id: &[u8]) -> Result<(), Refusal> {
    if is_job_id(id) {
        Ok(())
    } else {
        Err(errors::not_job_id(form.verb))
    }
}

/// Type gate: each key, in order, is a sorted set or absent, else the server's `WRONGTYPE`.
/// Returns the keys, open for the reads and writes that follow.
pub fn sorted_sets<'d, const N: usize>(
    db: &'d Db,
    keys: [&[u8]; N],
) -> Result<[Key<'d>; N], Refusal> {
    let mut open: [Option<Key<'d>>; N] = std::array::from_fn(|_| None);
    for (slot, key) in open.iter_mut().zip(keys) {
        let key = db.open(key);
        if !matches!(key.kind(), Kind::SortedSet | Kind::None) {
            return Err(errors::wrongtype());
        }
        *slot = Some(key);
    }
    Ok(open.map(|key| key.expect("every key was opened")))
}

/// Type gate: the open `key` is a hash or absent, else the server's `WRONGTYPE`.
pub fn hash(key: &Key) -> Result<(), Refusal> {
    match key.kind() {
        Kind::Hash | Kind::None => Ok(()),
        _ => Err(errors::wrongtype()),
    }
}

/// Which fields of a row a verb reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// `state` and `attempts` (the lease gate, `REMOVE`).
    Lease,
    /// Also `priority` and `max_attempts` (every verb that re-enters `pending` or may bury).
    All,
}

/// The fields of a job row the transitions read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    pub state: Option<Vec<u8>>,
    pub attempts: Option<Vec<u8>>,
    pub priority: Option<Vec<u8>>,
    pub max_attempts: Option<Vec<u8>>,
    /// The job's flow-control group (read by every verb that takes a job out of `active`).
    pub group: Option<Vec<u8>>,
}

impl Row {
    /// `HMGET <row> state attempts` (`Fields::Lease`) or `HMGET <row> state attempts priority
    /// max_attempts` (`Fields::All`) on the open row (a hash).
    pub fn read(row: &Key, fields: Fields) -> Result<Row, Refusal> {
        match fields {
            Fields::Lease => {
                let [state, attempts, group] = row.hash_get([b"state", b"attempts", b"group"])?;
                Ok(Row {
                    state,
                    attempts,
                    group,
                    ..Row::default()
                })
            }
            Fields::All => {
                let [state, attempts, priority, max_attempts, group] = row.hash_get([
                    b"state",
                    b"attempts",
                    b"priority",
                    b"max_attempts",
                    b"group",
                ])?;
                Ok(Row {
                    state,
                    attempts,
                    priority,
                    max_attempts,
                    group,
                })
            }
        }
    }

    /// The row's flow-control group as a list for [`crate::limits::release`]: empty without one.
    pub fn groups(&self) -> Vec<Vec<u8>> {
        self.group
            .iter()
            .filter(|g| !g.is_empty())
            .cloned()
            .collect()
    }

    /// Whether the row's `state` is `state`.
    pub fn is(&self, state: &[u8]) -> bool {
        self.state.as_deref() == Some(state)
    }

    /// The score the id gets whenever it (re-)enters `pending`: `priority` when it is a
    /// *priority* text; absent (or any other text) = `0`.
    pub fn priority(&self) -> i64 {
        self.priority
            .as_deref()
            .and_then(|text| Grammar::Priority.parse(text))
            .unwrap_or(0)
    }

    /// The attempts used so far: `attempts` when it is a *count*; absent (or any other text)
    /// counts as `0`.
    pub fn attempts(&self) -> i64 {
        self.attempts
            .as_deref()
            .and_then(|text| Grammar::Count.parse(text))
            .unwrap_or(0)
    }

    /// The attempt budget: the row's `max_attempts`, when it is a *positive*, wins over the
    /// caller's value.
    pub fn max_attempts(&self, caller: i64) -> i64 {
        self.max_attempts
            .as_deref()
            .and_then(|text| Grammar::Positive.parse(text))
            .unwrap_or(caller)
    }

    /// Whether the row has used up its attempts: `attempts ≥ max_attempts`.
    pub fn exhausted(&self, caller_max: i64) -> bool {
        self.attempts() >= self.max_attempts(caller_max)
    }
}

/// Row gate: the row must be a hash, else `ERR EMQ.<VERB> job not found`. Returns the row, open
/// for the writes that follow, and its fields.
pub fn row<'d>(
    db: &'d Db,
    form: &Form,
    key: &[u8],
    fields: Fields,
) -> Result<(Key<'d>, Row), Refusal> {
    let row = db.open(key);
    if row.kind() != Kind::Hash {
        return Err(errors::job_not_found(form.verb));
    }
    let fields = Row::read(&row, fields)?;
    Ok((row, fields))
}

/// Lease gate: the row's `state` is `active` and the id is a member of `active`, else
/// `ERR EMQ.<VERB> job is not active`; then the row's `attempts` equals the presented token,
/// else `ERR EMQ.<VERB> stale lease token`.
///
/// Membership of a row that passes both field checks is left to the verb's first write on
/// `active` (`ZREM`, or `ZADD XX` for `EXTEND`), which reports it with nothing written
/// ([`not_active`]); a refusal between here and that write goes through [`unless_gone`].
/// Only the stale-token refusal asks `ZSCORE` here, to put "not active" first.
pub fn lease(form: &Form, active: &Key, id: &[u8], row: &Row, token: &[u8]) -> Result<(), Refusal> {
    if !row.is(b"active") {
        return Err(errors::not_active(form.verb));
    }
    if row.attempts.as_deref() != Some(token) {
        return Err(unless_gone(
            form,
            active,
            id,
            errors::stale_token(form.verb),
        ));
    }
    Ok(())
}

/// A refusal after the lease gate and before the first write on `active`: "job is not active"
/// when the id is not a member of `active` (the lease gate's order), else `refusal`.
pub fn unless_gone(form: &Form, active: &Key, id: &[u8], refusal: Refusal) -> Refusal {
    by_membership(active, id, refusal, errors::not_active(form.verb))
}

/// The refusal a membership gate that a later write decides picks on a path that refuses before
/// that write: `ZSCORE <set> <id>`, then `member` or `absent` (a read error wins).
pub fn by_membership(set: &Key, id: &[u8], member_refusal: Refusal, absent: Refusal) -> Refusal {
    match member(set, id) {
        Ok(true) => member_refusal,
        Ok(false) => absent,
        Err(e) => e,
    }
}

/// The membership half of the lease gate, decided by the first write on `active`: `changed` is
/// whether that write (`ZREM`, `ZADD XX`) found the id; if not, nothing was written.
pub fn not_active(form: &Form, changed: bool) -> Result<(), Refusal> {
    if changed {
        Ok(())
    } else {
        Err(errors::not_active(form.verb))
    }
}

/// Whether `id` is a member of the open sorted set `set` (`ZSCORE`).
pub fn member(set: &Key, id: &[u8]) -> Result<bool, Refusal> {
    Ok(set.score(id)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(attempts: Option<&[u8]>, max: Option<&[u8]>) -> Row {
        Row {
            state: Some(b"active".to_vec()),
            attempts: attempts.map(<[u8]>::to_vec),
            priority: None,
            max_attempts: max.map(<[u8]>::to_vec),
            group: None,
        }
    }

    #[test]
    fn attempts_and_budget() {
        assert_eq!(row(None, None).attempts(), 0);
        assert_eq!(row(Some(b"3"), None).attempts(), 3);
        assert_eq!(row(Some(b"3"), None).max_attempts(5), 5);
        assert_eq!(row(Some(b"3"), Some(b"2")).max_attempts(5), 2);
        assert!(!row(Some(b"3"), None).exhausted(5));
        assert!(row(Some(b"5"), None).exhausted(5));
        assert!(row(Some(b"3"), Some(b"3")).exhausted(10));
        assert!(!row(Some(b"3"), Some(b"4")).exhausted(1));
    }

    #[test]
    fn malformed_fields_fall_back() {
        for bad in [&b"-3"[..], b"03", b"x", b"", b"1.5", b"1234567890123456"] {
            assert_eq!(row(Some(bad), None).attempts(), 0, "{bad:?}");
        }
        for bad in [&b"0"[..], b"-2", b"02", b"x", b""] {
            assert_eq!(row(None, Some(bad)).max_attempts(7), 7, "{bad:?}");
        }
    }

    #[test]
    fn priority_defaults_to_zero() {
        let mut r = row(None, None);
        assert_eq!(r.priority(), 0);
        r.priority = Some(b"-4".to_vec());
        assert_eq!(r.priority(), -4);
        r.priority = Some(b"12".to_vec());
        assert_eq!(r.priority(), 12);
        for bad in [&b"-0"[..], b"01", b"1.5", b"inf", b"", b"x"] {
            r.priority = Some(bad.to_vec());
            assert_eq!(r.priority(), 0, "{bad:?}");
        }
        assert!(r.is(b"active"));
        assert!(!r.is(b"pending"));
    }
}

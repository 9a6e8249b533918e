//! The shared gates: id gate, type gate, row gate, lease gate.
//!
//! Each gate only reads; a refusal leaves the keyspace as it was.

use valkey_module::Context;

use crate::errors::{self, Refusal};
use crate::keyspace::is_job_id;
use crate::shape::Form;
use crate::store::{self, Kind};
use crate::values::Grammar;

/// Id gate: the id's first three bytes are `JOB`, else `ERR EMQ.<VERB> id must start with JOB`.
pub fn job_id(form: &Form, id: &[u8]) -> Result<(), Refusal> {
    if is_job_id(id) {
        Ok(())
    } else {
        Err(errors::not_job_id(form.verb))
    }
}

/// Type gate: each key is a sorted set or absent, else the server's `WRONGTYPE`.
pub fn sorted_sets(ctx: &Context, keys: &[&[u8]]) -> Result<(), Refusal> {
    for key in keys {
        if !matches!(store::kind(ctx, key)?, Kind::SortedSet | Kind::None) {
            return Err(errors::wrongtype());
        }
    }
    Ok(())
}

/// Type gate: `key` is a hash or absent, else the server's `WRONGTYPE`.
pub fn hash(ctx: &Context, key: &[u8]) -> Result<(), Refusal> {
    match store::kind(ctx, key)? {
        Kind::Hash | Kind::None => Ok(()),
        _ => Err(errors::wrongtype()),
    }
}

/// The fields of a job row the transitions read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    pub state: Option<Vec<u8>>,
    pub attempts: Option<Vec<u8>>,
    pub priority: Option<Vec<u8>>,
    pub max_attempts: Option<Vec<u8>>,
}

impl Row {
    /// `HMGET <row> state attempts priority max_attempts` (the row is a hash).
    pub fn read(ctx: &Context, key: &[u8]) -> Result<Row, Refusal> {
        let answer = store::read(
            ctx,
            "HMGET",
            &[key, b"state", b"attempts", b"priority", b"max_attempts"],
        )?;
        let mut fields = store::elements(&answer).into_iter();
        let mut next = || fields.next().flatten();
        Ok(Row {
            state: next(),
            attempts: next(),
            priority: next(),
            max_attempts: next(),
        })
    }

    /// Whether the row's `state` is `state`.
    pub fn is(&self, state: &[u8]) -> bool {
        self.state.as_deref() == Some(state)
    }

    /// The score the id gets whenever it (re-)enters `pending`: `priority` when it is a
    /// *priority* text; absent (or any other text) = `0`.
    pub fn priority(&self) -> &[u8] {
        match self.priority.as_deref() {
            Some(text) if Grammar::Priority.parse(text).is_some() => text,
            _ => b"0",
        }
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

/// Row gate: the row must be a hash, else `ERR EMQ.<VERB> job not found`. Returns its fields.
pub fn row(ctx: &Context, form: &Form, key: &[u8]) -> Result<Row, Refusal> {
    if store::kind(ctx, key)? != Kind::Hash {
        return Err(errors::job_not_found(form.verb));
    }
    Row::read(ctx, key)
}

/// Lease gate: the row's `state` is `active` and the id is a member of `active`, else
/// `ERR EMQ.<VERB> job is not active`; then the row's `attempts` equals the presented token,
/// else `ERR EMQ.<VERB> stale lease token`.
pub fn lease(
    ctx: &Context,
    form: &Form,
    active: &[u8],
    id: &[u8],
    row: &Row,
    token: &[u8],
) -> Result<(), Refusal> {
    if !row.is(b"active") || !member(ctx, active, id)? {
        return Err(errors::not_active(form.verb));
    }
    if row.attempts.as_deref() != Some(token) {
        return Err(errors::stale_token(form.verb));
    }
    Ok(())
}

/// Whether `id` is a member of the sorted set `key`.
pub fn member(ctx: &Context, key: &[u8], id: &[u8]) -> Result<bool, Refusal> {
    let score = store::read(ctx, "ZSCORE", &[key, id])?;
    Ok(store::bytes(&score).is_some())
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
        assert_eq!(r.priority(), b"0");
        r.priority = Some(b"-4".to_vec());
        assert_eq!(r.priority(), b"-4");
        r.priority = Some(b"12".to_vec());
        assert_eq!(r.priority(), b"12");
        for bad in [&b"-0"[..], b"01", b"1.5", b"inf", b"", b"x"] {
            r.priority = Some(bad.to_vec());
            assert_eq!(r.priority(), b"0", "{bad:?}");
        }
        assert!(r.is(b"active"));
        assert!(!r.is(b"pending"));
    }
}

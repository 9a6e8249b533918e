//! An open key of a verb's [`Db`]: its reads, and its writes with exactly the effects of their
//! plain commands (see the parent module).

use std::ffi::c_int;

use valkey_module::raw;

use super::ffi::{self, RKey};
use super::scope::Scope;
use super::strings::Str;
use crate::errors::{self, Refusal};

/// A key's type, reduced to what the gates ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    None,
    String,
    Hash,
    SortedSet,
    Stream,
    Other,
}

impl Kind {
    /// The type of an open key (NULL: absent).
    pub(super) fn of(key: *mut RKey) -> Kind {
        Kind::from_type(ffi::key_type(key))
    }

    /// A `REDISMODULE_KEYTYPE_*` reduced.
    fn from_type(t: isize) -> Kind {
        match t {
            raw::REDISMODULE_KEYTYPE_EMPTY => Kind::None,
            raw::REDISMODULE_KEYTYPE_STRING => Kind::String,
            raw::REDISMODULE_KEYTYPE_HASH => Kind::Hash,
            raw::REDISMODULE_KEYTYPE_ZSET => Kind::SortedSet,
            raw::REDISMODULE_KEYTYPE_STREAM => Kind::Stream,
            _ => Kind::Other,
        }
    }
}

/// What a `ZADD` of one member did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zadd {
    Added,
    Updated,
    Unchanged,
    /// The condition (`NX`/`XX`) held the write back: nothing changed.
    Skipped,
}

/// The condition of a `ZADD`: none, `NX` (only a new member), `XX` (only an existing member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    New,
    Existing,
}

/// The most pairs one [`Key::hset`] writes (a new row of `ADD` with every field writes 11).
pub const HSET_MAX_PAIRS: usize = 16;

/// An open key; closed on drop. Reads take `&self`, writes `&mut self`; a key is open at most
/// once per verb, so no other handle sees a value a write replaces or deletes.
pub struct Key<'d> {
    pub(super) db: &'d Scope,
    pub(super) name: Str,
    pub(super) ptr: *mut RKey,
    write: bool,
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        ffi::close_key(self.ptr);
        self.db.closed(self.name.ptr);
    }
}

impl<'d> Key<'d> {
    /// The key `name`, opened by `db` (`ptr`, for writing when `write`).
    pub(super) fn new(db: &'d Scope, name: Str, ptr: *mut RKey, write: bool) -> Self {
        Key {
            db,
            name,
            ptr,
            write,
        }
    }
}

impl Key<'_> {
    /// `TYPE`, reduced to [`Kind`].
    pub fn kind(&self) -> Kind {
        Kind::of(self.ptr)
    }

    /// Whether the key exists (any type).
    pub fn exists(&self) -> bool {
        self.kind() != Kind::None
    }

    /// A sorted set (`true`) or absent (`false`), else `WRONGTYPE`.
    fn sorted_set(&self) -> Result<bool, Refusal> {
        match self.kind() {
            Kind::SortedSet => Ok(true),
            Kind::None => Ok(false),
            _ => Err(errors::wrongtype()),
        }
    }

    /// A hash (`true`) or absent (`false`), else `WRONGTYPE`.
    fn hash(&self) -> Result<bool, Refusal> {
        match self.kind() {
            Kind::Hash => Ok(true),
            Kind::None => Ok(false),
            _ => Err(errors::wrongtype()),
        }
    }

    /// `ZCARD`.
    pub fn card(&self) -> Result<i64, Refusal> {
        if !self.sorted_set()? {
            return Ok(0);
        }
        Ok(ffi::value_length(self.ptr) as i64)
    }

    /// `ZSCORE <member>`: `None` when not a member.
    pub fn score(&self, member: &[u8]) -> Result<Option<f64>, Refusal> {
        if !self.sorted_set()? {
            return Ok(None);
        }
        let elem = self.db.string(member);
        Ok(ffi::zset_score(self.ptr, elem.ptr))
    }

    /// The members with `min ≤ score ≤ max` (`max` excluded when `max_excluded`), lowest score
    /// first (ties by member), at most `limit`: `ZRANGE <key> <min> <max> BYSCORE LIMIT 0 <limit>`.
    pub fn range(
        &self,
        min: f64,
        max: f64,
        max_excluded: bool,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, Refusal> {
        if !self.sorted_set()? || limit == 0 {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(limit.min(16));
        let range = (min, max, max_excluded);
        ffi::zset_range(self.db.ctx, self.ptr, range, limit, &mut out);
        Ok(out)
    }

    /// The first `n` members by rank: `ZRANGE <key> 0 <n - 1>`.
    pub fn first(&self, n: usize) -> Result<Vec<Vec<u8>>, Refusal> {
        self.range(f64::NEG_INFINITY, f64::INFINITY, false, n)
    }

    /// `HMGET <key> <field>…` (the key a hash or absent, else `WRONGTYPE`).
    pub fn hash_get<const N: usize>(
        &self,
        fields: [&[u8]; N],
    ) -> Result<[Option<Vec<u8>>; N], Refusal> {
        let mut out = std::array::from_fn(|_| None);
        if !self.hash()? {
            return Ok(out);
        }
        for (slot, field) in out.iter_mut().zip(fields) {
            let name = self.db.string(field);
            *slot = ffi::hash_get(self.db.ctx, self.ptr, name.ptr);
        }
        Ok(out)
    }

    /// A write through a key opened read-only: the write guard refused first (never reached).
    pub(super) fn writing(&self) -> Result<(), Refusal> {
        if self.write {
            Ok(())
        } else {
            Err(errors::readonly())
        }
    }

    /// `ZADD <key> <score> <member>`: the score is an integer, written exactly (as a double,
    /// replicated as its decimal text). A member already at that score is left as it is, with no
    /// signal, notification or replication (as `ZADD` reporting 0 changes).
    pub fn zadd(&mut self, score: i64, member: &[u8]) -> Result<Zadd, Refusal> {
        self.zadd_when(When::Always, score, member)
    }

    /// `ZADD <key> [NX|XX] <score> <member>`, as [`Key::zadd`]; a held-back write is
    /// [`Zadd::Skipped`]. Replicated as a plain `ZADD` (the condition held on the primary).
    pub fn zadd_when(&mut self, when: When, score: i64, member: &[u8]) -> Result<Zadd, Refusal> {
        self.writing()?;
        if when == When::Existing && self.kind() == Kind::None {
            // The module API would create the (empty) set before declining the member.
            return Ok(Zadd::Skipped);
        }
        let elem = self.db.string(member);
        let mut flags: c_int = match when {
            When::Always => 0,
            When::New => raw::REDISMODULE_ZADD_NX as c_int,
            When::Existing => raw::REDISMODULE_ZADD_XX as c_int,
        };
        if !ffi::zset_add(self.ptr, score as f64, elem.ptr, &mut flags) {
            return Err(errors::wrongtype());
        }
        let outcome = zadd_outcome(flags);
        if !matches!(outcome, Zadd::Added | Zadd::Updated) {
            return Ok(outcome);
        }
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_ZSET, c"zadd", &self.name);
        ffi::replicate_with_integer(db.ctx, true, self.name.ptr, score, elem.ptr);
        Ok(outcome)
    }

    /// `ZREM <key> <member>` → whether it was a member. An emptied set is deleted.
    pub fn zrem(&mut self, member: &[u8]) -> Result<bool, Refusal> {
        self.writing()?;
        let elem = self.db.string(member);
        match ffi::zset_rem(self.ptr, elem.ptr) {
            None => return Err(errors::wrongtype()),
            Some(false) => return Ok(false),
            Some(true) => {}
        }
        let db = self.db;
        db.notify(raw::REDISMODULE_NOTIFY_ZSET, c"zrem", &self.name);
        if self.kind() == Kind::None {
            db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        }
        db.signal(&self.name);
        db.replicate(c"ZREM", &[&self.name, &elem], true);
        Ok(true)
    }

    /// `HSET <key> <field> <value> …` (always a change, as `HSET` counts it); 1 to
    /// [`HSET_MAX_PAIRS`] pairs. More is a verb's bug:
    /// refused with an error reply, never a panic (a panic here would abort the server).
    pub fn hset(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), Refusal> {
        const MAX_PAIRS: usize = HSET_MAX_PAIRS;
        if !(1..=MAX_PAIRS).contains(&pairs.len()) {
            return Err(errors::bug(&format!(
                "HSET of {} pairs (1 to {MAX_PAIRS})",
                pairs.len()
            )));
        }
        self.writing()?;
        if !matches!(self.kind(), Kind::Hash | Kind::None) {
            return Err(errors::wrongtype());
        }
        let db = self.db;
        let mut strings: [Option<Str>; 2 * MAX_PAIRS] = Default::default();
        for (i, (field, value)) in pairs.iter().enumerate() {
            let (field, value) = (db.string(field), db.string(value));
            ffi::hash_set(self.ptr, field.ptr, Some(value.ptr));
            strings[2 * i] = Some(field);
            strings[2 * i + 1] = Some(value);
        }
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hset", &self.name);
        let mut args: [&Str; 2 * MAX_PAIRS + 1] = [&self.name; 2 * MAX_PAIRS + 1];
        for (slot, s) in args[1..].iter_mut().zip(strings.iter().flatten()) {
            *slot = s;
        }
        db.replicate(c"HSET", &args[..1 + 2 * pairs.len()], true);
        Ok(())
    }

    /// `HINCRBY <key> <field> <by>` → the new value. The field must be absent (counts as 0) or
    /// hold an integer whose sum with `by` fits an `i64`, else the server's own texts
    /// (`ERR hash value is not an integer`, `ERR increment or decrement would overflow`), nothing
    /// written. Replicated as the plain `HINCRBY`.
    pub fn hincrby(&mut self, field: &[u8], by: i64) -> Result<i64, Refusal> {
        self.writing()?;
        let [current] = self.hash_get([field])?;
        let current = match current {
            None => 0,
            Some(text) => stored_integer(&text).ok_or_else(errors::not_an_integer)?,
        };
        let value = current.checked_add(by).ok_or_else(errors::overflow)?;
        let db = self.db;
        let (name, text) = (db.string(field), value.to_string());
        let text = db.string(text.as_bytes());
        ffi::hash_set(self.ptr, name.ptr, Some(text.ptr));
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hincrby", &self.name);
        ffi::replicate_with_integer(db.ctx, false, self.name.ptr, by, name.ptr);
        Ok(value)
    }

    /// `HDEL <key> <field>` → whether the field was there. An emptied hash is deleted.
    pub fn hdel(&mut self, field: &[u8]) -> Result<bool, Refusal> {
        self.writing()?;
        if !self.hash()? {
            return Ok(false);
        }
        let field = self.db.string(field);
        if ffi::hash_set(self.ptr, field.ptr, None) == 0 {
            return Ok(false);
        }
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hdel", &self.name);
        if self.kind() == Kind::None {
            db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        }
        db.replicate(c"HDEL", &[&self.name, &field], true);
        Ok(true)
    }

    /// `GET`: the value of a string key, `None` when absent, else `WRONGTYPE`.
    pub fn string(&self) -> Result<Option<Vec<u8>>, Refusal> {
        match self.kind() {
            Kind::None => Ok(None),
            Kind::String => Ok(Some(ffi::string_value(self.ptr).to_vec())),
            _ => Err(errors::wrongtype()),
        }
    }

    /// `SET <key> <value>`, with `PXAT <at_ms>` when an expiry is given; replicated as that plain
    /// command (the absolute form, as the server propagates a script's `SET … PX`).
    pub fn set(&mut self, value: &[u8], expire_at_ms: Option<i64>) -> Result<(), Refusal> {
        self.writing()?;
        if !matches!(self.kind(), Kind::String | Kind::None) {
            return Err(errors::wrongtype());
        }
        let db = self.db;
        let value = db.string(value);
        assert!(ffi::string_set(self.ptr, value.ptr), "SET of a string key");
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_STRING, c"set", &self.name);
        match expire_at_ms {
            None => db.replicate(c"SET", &[&self.name, &value], true),
            Some(at) => {
                assert!(ffi::set_abs_expire(self.ptr, at), "PXAT of a string key");
                db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"expire", &self.name);
                let (pxat, at) = (db.string(b"PXAT"), db.string(at.to_string().as_bytes()));
                db.replicate(c"SET", &[&self.name, &value, &pxat, &at], true);
            }
        }
        Ok(())
    }

    /// `DEL <key>` (any type) → whether it existed.
    pub fn delete(&mut self) -> Result<bool, Refusal> {
        self.writing()?;
        if self.kind() == Kind::None {
            return Ok(false);
        }
        ffi::delete_key(self.ptr);
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        db.replicate(c"DEL", &[&self.name], true);
        Ok(true)
    }
}

/// What a `ZADD` of one member did, from the flags the module API reports.
fn zadd_outcome(flags: c_int) -> Zadd {
    if flags & raw::REDISMODULE_ZADD_ADDED as c_int != 0 {
        Zadd::Added
    } else if flags & raw::REDISMODULE_ZADD_UPDATED as c_int != 0 {
        Zadd::Updated
    } else if flags & raw::REDISMODULE_ZADD_NOP as c_int != 0 {
        Zadd::Skipped
    } else {
        Zadd::Unchanged
    }
}

/// A hash field's integer as the server writes one (no sign but `-`, no leading zero, fits an
/// `i64`): what `HINCRBY` accepts.
fn stored_integer(text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?;
    text.parse::<i64>().ok().filter(|n| n.to_string() == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_types() {
        assert_eq!(Kind::from_type(raw::REDISMODULE_KEYTYPE_EMPTY), Kind::None);
        assert_eq!(
            Kind::from_type(raw::REDISMODULE_KEYTYPE_STRING),
            Kind::String
        );
        assert_eq!(Kind::from_type(raw::REDISMODULE_KEYTYPE_HASH), Kind::Hash);
        assert_eq!(
            Kind::from_type(raw::REDISMODULE_KEYTYPE_ZSET),
            Kind::SortedSet
        );
        for other in [raw::REDISMODULE_KEYTYPE_LIST, raw::REDISMODULE_KEYTYPE_SET] {
            assert_eq!(Kind::from_type(other), Kind::Other);
        }
    }

    #[test]
    fn zadd_outcomes() {
        let flag = |f: u32| f as c_int;
        assert_eq!(zadd_outcome(flag(raw::REDISMODULE_ZADD_ADDED)), Zadd::Added);
        assert_eq!(
            zadd_outcome(flag(raw::REDISMODULE_ZADD_UPDATED)),
            Zadd::Updated
        );
        assert_eq!(zadd_outcome(flag(raw::REDISMODULE_ZADD_NOP)), Zadd::Skipped);
        assert_eq!(zadd_outcome(0), Zadd::Unchanged);
        let nx_added = flag(raw::REDISMODULE_ZADD_NX | raw::REDISMODULE_ZADD_ADDED);
        assert_eq!(zadd_outcome(nx_added), Zadd::Added);
    }

    #[test]
    fn hincrby_reads_integers_as_the_server_writes_them() {
        assert_eq!(stored_integer(b"0"), Some(0));
        assert_eq!(stored_integer(b"42"), Some(42));
        assert_eq!(stored_integer(b"-7"), Some(-7));
        assert_eq!(stored_integer(b"9223372036854775807"), Some(i64::MAX));
        for bad in [
            &b""[..],
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1.0",
            b"x",
            b"9223372036854775808",
        ] {
            assert_eq!(stored_integer(bad), None, "{bad:?}");
        }
    }
}

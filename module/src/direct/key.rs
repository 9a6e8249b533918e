//! An open key of a verb's [`Db`]: its reads, and its writes with exactly the effects of their
//! plain commands (see the parent module).

use std::ffi::c_int;
use std::ptr;

use valkey_module::raw;

use super::{bytes_of, kind_of, Db, Kind, RKey, RString, Str, When, Zadd, HASH_DELETE};
use crate::errors::{self, Refusal};

/// An open key; closed on drop. Reads take `&self`, writes `&mut self`; a key is open at most
/// once per verb, so no other handle sees a value a write replaces or deletes.
pub struct Key<'d> {
    pub(super) db: &'d Db<'d>,
    pub(super) name: Str,
    pub(super) ptr: *mut RKey,
    pub(super) write: bool,
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        // SAFETY: `CloseKey` accepts NULL; otherwise opened by `OpenKey`, closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.ptr) };
        self.db.closed(self.name.bytes().as_ptr());
    }
}

impl Key<'_> {
    /// `TYPE`, reduced to [`Kind`].
    pub fn kind(&self) -> Kind {
        kind_of(self.ptr)
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
        // SAFETY: an open sorted-set key.
        Ok(unsafe { raw::RedisModule_ValueLength.unwrap()(self.ptr) } as i64)
    }

    /// `ZSCORE <member>`: `None` when not a member.
    pub fn score(&self, member: &[u8]) -> Result<Option<f64>, Refusal> {
        if !self.sorted_set()? {
            return Ok(None);
        }
        let elem = self.db.string(member);
        let mut score = 0f64;
        // SAFETY: an open sorted-set key and a live member string.
        let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(self.ptr, elem.ptr, &mut score) };
        Ok((found == raw::Status::Ok as c_int).then_some(score))
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
        // SAFETY: an open sorted-set key; the iterator is stopped before returning, each
        // element string is freed after its bytes are copied.
        unsafe {
            let first = raw::RedisModule_ZsetFirstInScoreRange.unwrap()(
                self.ptr,
                min,
                max,
                0,
                c_int::from(max_excluded),
            );
            if first != raw::Status::Ok as c_int {
                return Ok(out);
            }
            while out.len() < limit && raw::RedisModule_ZsetRangeEndReached.unwrap()(self.ptr) == 0
            {
                let elem =
                    raw::RedisModule_ZsetRangeCurrentElement.unwrap()(self.ptr, ptr::null_mut());
                if elem.is_null() {
                    break;
                }
                out.push(bytes_of(elem));
                raw::RedisModule_FreeString.unwrap()(self.db.ctx, elem);
                if raw::RedisModule_ZsetRangeNext.unwrap()(self.ptr) == 0 {
                    break;
                }
            }
            raw::RedisModule_ZsetRangeStop.unwrap()(self.ptr);
        }
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
            let mut value: *mut RString = ptr::null_mut();
            // SAFETY: an open hash key, a live field, a pointer to receive the value; NULL ends
            // the list. The value string (if any) is freed after its bytes are copied.
            unsafe {
                raw::RedisModule_HashGet.unwrap()(
                    self.ptr,
                    raw::REDISMODULE_HASH_NONE as c_int,
                    name.ptr,
                    &mut value as *mut *mut RString,
                    ptr::null_mut::<RString>(),
                );
                if !value.is_null() {
                    *slot = Some(bytes_of(value));
                    raw::RedisModule_FreeString.unwrap()(self.db.ctx, value);
                }
            }
        }
        Ok(out)
    }

    /// A write through a key opened read-only: the write guard refused first (never reached).
    fn writing(&self) -> Result<(), Refusal> {
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
        // SAFETY: a key open for writing and a live member string.
        let done = unsafe {
            raw::RedisModule_ZsetAdd.unwrap()(self.ptr, score as f64, elem.ptr, &mut flags)
        };
        if done != raw::Status::Ok as c_int {
            return Err(errors::wrongtype());
        }
        let outcome = if flags & raw::REDISMODULE_ZADD_ADDED as c_int != 0 {
            Zadd::Added
        } else if flags & raw::REDISMODULE_ZADD_UPDATED as c_int != 0 {
            Zadd::Updated
        } else if flags & raw::REDISMODULE_ZADD_NOP as c_int != 0 {
            return Ok(Zadd::Skipped);
        } else {
            return Ok(Zadd::Unchanged);
        };
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_ZSET, c"zadd", &self.name);
        // SAFETY: `s` takes a live string object, `l` a long long (replicated as its decimal
        // text); the server takes its own references.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                db.ctx,
                c"ZADD".as_ptr(),
                c"sls".as_ptr(),
                self.name.ptr,
                score as std::ffi::c_longlong,
                elem.ptr,
            )
        };
        Ok(outcome)
    }

    /// `ZREM <key> <member>` → whether it was a member. An emptied set is deleted.
    pub fn zrem(&mut self, member: &[u8]) -> Result<bool, Refusal> {
        self.writing()?;
        let elem = self.db.string(member);
        let mut deleted: c_int = 0;
        // SAFETY: a key open for writing and a live member string.
        let done = unsafe { raw::RedisModule_ZsetRem.unwrap()(self.ptr, elem.ptr, &mut deleted) };
        if done != raw::Status::Ok as c_int {
            return Err(errors::wrongtype());
        }
        if deleted == 0 {
            return Ok(false);
        }
        let db = self.db;
        db.notify(raw::REDISMODULE_NOTIFY_ZSET, c"zrem", &self.name);
        if self.kind() == Kind::None {
            db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        }
        db.signal(&self.name);
        db.replicate2(c"ZREM", &self.name, &elem, true);
        Ok(true)
    }

    /// `HSET <key> <field> <value> …` (always a change, as `HSET` counts it); 1 to 5 pairs.
    pub fn hset(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), Refusal> {
        const MAX_PAIRS: usize = 5;
        assert!(
            (1..=MAX_PAIRS).contains(&pairs.len()),
            "HSET of 1 to {MAX_PAIRS} pairs"
        );
        self.writing()?;
        if !matches!(self.kind(), Kind::Hash | Kind::None) {
            return Err(errors::wrongtype());
        }
        let db = self.db;
        let mut strings: [Option<Str>; 2 * MAX_PAIRS] = Default::default();
        for (i, (field, value)) in pairs.iter().enumerate() {
            let (field, value) = (db.string(field), db.string(value));
            // SAFETY: a hash key open for writing; live field and value; NULL ends the list.
            unsafe {
                raw::RedisModule_HashSet.unwrap()(
                    self.ptr,
                    raw::REDISMODULE_HASH_NONE as c_int,
                    field.ptr,
                    value.ptr,
                    ptr::null_mut::<RString>(),
                )
            };
            strings[2 * i] = Some(field);
            strings[2 * i + 1] = Some(value);
        }
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hset", &self.name);
        let mut a = [ptr::null_mut::<RString>(); 2 * MAX_PAIRS];
        for (slot, s) in a.iter_mut().zip(strings.iter().flatten()) {
            *slot = s.ptr;
        }
        let (hset, key) = (c"HSET", self.name.ptr);
        // SAFETY: the API is resolved at load time; each `s` takes a live string object (the
        // server takes its own references); `v` an array of them and its length.
        unsafe {
            let replicate = raw::RedisModule_Replicate.unwrap();
            match pairs.len() {
                1 => replicate(db.ctx, hset.as_ptr(), c"sss".as_ptr(), key, a[0], a[1]),
                2 => replicate(
                    db.ctx,
                    hset.as_ptr(),
                    c"sssss".as_ptr(),
                    key,
                    a[0],
                    a[1],
                    a[2],
                    a[3],
                ),
                3 => replicate(
                    db.ctx,
                    hset.as_ptr(),
                    c"sssssss".as_ptr(),
                    key,
                    a[0],
                    a[1],
                    a[2],
                    a[3],
                    a[4],
                    a[5],
                ),
                _ => replicate(
                    db.ctx,
                    hset.as_ptr(),
                    c"sv".as_ptr(),
                    key,
                    a.as_ptr(),
                    2 * pairs.len(),
                ),
            }
        };
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
            // An integer as the server writes one: no sign but `-`, no leading zero.
            Some(text) => std::str::from_utf8(&text)
                .ok()
                .and_then(|t| t.parse::<i64>().ok().filter(|n| n.to_string() == t))
                .ok_or_else(errors::not_an_integer)?,
        };
        let value = current.checked_add(by).ok_or_else(errors::overflow)?;
        let db = self.db;
        let (name, text) = (db.string(field), value.to_string());
        let text = db.string(text.as_bytes());
        // SAFETY: a hash key open for writing (or absent); live field and value; NULL ends the
        // list.
        unsafe {
            raw::RedisModule_HashSet.unwrap()(
                self.ptr,
                raw::REDISMODULE_HASH_NONE as c_int,
                name.ptr,
                text.ptr,
                ptr::null_mut::<RString>(),
            )
        };
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hincrby", &self.name);
        // SAFETY: `s` takes a live string object, `l` a long long; the server takes its own
        // references.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                db.ctx,
                c"HINCRBY".as_ptr(),
                c"ssl".as_ptr(),
                self.name.ptr,
                name.ptr,
                by as std::ffi::c_longlong,
            )
        };
        Ok(value)
    }

    /// `HDEL <key> <field>` → whether the field was there. An emptied hash is deleted.
    pub fn hdel(&mut self, field: &[u8]) -> Result<bool, Refusal> {
        self.writing()?;
        if !self.hash()? {
            return Ok(false);
        }
        let field = self.db.string(field);
        // SAFETY: a hash key open for writing; a live field; NULL ends the list.
        let n = unsafe {
            raw::RedisModule_HashSet.unwrap()(
                self.ptr,
                raw::REDISMODULE_HASH_NONE as c_int,
                field.ptr,
                HASH_DELETE,
                ptr::null_mut::<RString>(),
            )
        };
        if n == 0 {
            return Ok(false);
        }
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hdel", &self.name);
        if self.kind() == Kind::None {
            db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        }
        db.replicate2(c"HDEL", &self.name, &field, true);
        Ok(true)
    }

    /// `DEL <key>` (any type) → whether it existed.
    pub fn delete(&mut self) -> Result<bool, Refusal> {
        self.writing()?;
        if self.kind() == Kind::None {
            return Ok(false);
        }
        // SAFETY: a key open for writing.
        unsafe { raw::RedisModule_DeleteKey.unwrap()(self.ptr) };
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        // SAFETY: `s` takes a live string object; the server takes its own reference.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                db.ctx,
                c"DEL".as_ptr(),
                c"s".as_ptr(),
                self.name.ptr,
            )
        };
        Ok(true)
    }
}

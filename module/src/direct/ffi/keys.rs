//! The module API on open keys: strings, sorted sets, hashes, streams (each call with its SAFETY
//! note; see the parent module).

use std::ffi::{c_int, c_long};
use std::ptr;

use valkey_module::raw;

use super::*;

/// Opens `name` read-only, or for reading and writing. NULL: absent and opened read-only.
pub(in crate::direct) fn open_key(ctx: *mut RCtx, name: *mut RString, write: bool) -> *mut RKey {
    let mode = if write {
        raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
    } else {
        raw::REDISMODULE_READ
    };
    // SAFETY: a live context and key name; the server keeps its own reference to the name.
    unsafe { raw::RedisModule_OpenKey.unwrap()(ctx, name, mode as c_int).cast() }
}

/// Closes a key (NULL accepted).
pub(in crate::direct) fn close_key(key: *mut RKey) {
    // SAFETY: NULL, or a key opened by `open_key` and closed once.
    unsafe { raw::RedisModule_CloseKey.unwrap()(key) };
}

/// The type of an open key (`REDISMODULE_KEYTYPE_*`; NULL: absent, `EMPTY`).
pub(in crate::direct) fn key_type(key: *mut RKey) -> isize {
    // SAFETY: `KeyType` accepts NULL or an open key.
    unsafe { raw::RedisModule_KeyType.unwrap()(key) as isize }
}

/// The bytes of an open string key, valid while the key is open.
pub(in crate::direct) fn string_value<'a>(key: *mut RKey) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: an open string key, read-only access; the bytes live while it stays open.
    unsafe {
        let p = raw::RedisModule_StringDMA.unwrap()(key, &mut len, raw::REDISMODULE_READ as c_int);
        if p.is_null() || len == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
}

/// The length of an open key's value (`ZCARD` for a sorted set).
pub(in crate::direct) fn value_length(key: *mut RKey) -> usize {
    // SAFETY: an open key.
    unsafe { raw::RedisModule_ValueLength.unwrap()(key) }
}

/// `ZSCORE`: the member's score in an open sorted set.
pub(in crate::direct) fn zset_score(key: *mut RKey, member: *mut RString) -> Option<f64> {
    let mut score = 0f64;
    // SAFETY: an open sorted-set key and a live member string.
    let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(key, member, &mut score) };
    (found == raw::Status::Ok as c_int).then_some(score)
}

/// The members of an open sorted set with `min ≤ score ≤ max` (`max` excluded when asked),
/// lowest first, at most `limit`, appended to `out`.
pub(in crate::direct) fn zset_range(
    ctx: *mut RCtx,
    key: *mut RKey,
    (min, max, max_excluded): (f64, f64, bool),
    limit: usize,
    out: &mut Vec<Vec<u8>>,
) {
    // SAFETY: an open sorted-set key; the iterator is stopped before returning; each element
    // string is freed after its bytes are copied.
    unsafe {
        let first = raw::RedisModule_ZsetFirstInScoreRange.unwrap()(
            key,
            min,
            max,
            0,
            c_int::from(max_excluded),
        );
        if first != raw::Status::Ok as c_int {
            return;
        }
        while out.len() < limit && raw::RedisModule_ZsetRangeEndReached.unwrap()(key) == 0 {
            let elem = raw::RedisModule_ZsetRangeCurrentElement.unwrap()(key, ptr::null_mut());
            if elem.is_null() {
                break;
            }
            out.push(string_bytes(elem).to_vec());
            raw::RedisModule_FreeString.unwrap()(ctx, elem);
            if raw::RedisModule_ZsetRangeNext.unwrap()(key) == 0 {
                break;
            }
        }
        raw::RedisModule_ZsetRangeStop.unwrap()(key);
    }
}

/// `ZADD` of one member to a key open for writing; `flags` in: `NX`/`XX`, out: what happened.
/// `false`: not a sorted set.
pub(in crate::direct) fn zset_add(
    key: *mut RKey,
    score: f64,
    member: *mut RString,
    flags: &mut c_int,
) -> bool {
    // SAFETY: a key open for writing and a live member string.
    unsafe {
        raw::RedisModule_ZsetAdd.unwrap()(key, score, member, flags) == raw::Status::Ok as c_int
    }
}

/// `ZREM` of one member from a key open for writing: `Some(removed)`, `None` when not a sorted
/// set.
pub(in crate::direct) fn zset_rem(key: *mut RKey, member: *mut RString) -> Option<bool> {
    let mut deleted: c_int = 0;
    // SAFETY: a key open for writing and a live member string.
    let done = unsafe { raw::RedisModule_ZsetRem.unwrap()(key, member, &mut deleted) };
    (done == raw::Status::Ok as c_int).then_some(deleted != 0)
}

/// `HGET`: a field of an open hash, copied.
pub(in crate::direct) fn hash_get(
    ctx: *mut RCtx,
    key: *mut RKey,
    field: *mut RString,
) -> Option<Vec<u8>> {
    let mut value: *mut RString = ptr::null_mut();
    // SAFETY: an open hash key, a live field, a pointer to receive the value; NULL ends the list.
    // The value string (if any) is freed after its bytes are copied.
    unsafe {
        raw::RedisModule_HashGet.unwrap()(
            key,
            raw::REDISMODULE_HASH_NONE as c_int,
            field,
            &mut value as *mut *mut RString,
            ptr::null_mut::<RString>(),
        );
        if value.is_null() {
            return None;
        }
        let bytes = string_bytes(value).to_vec();
        raw::RedisModule_FreeString.unwrap()(ctx, value);
        Some(bytes)
    }
}

/// `HSET` of one field (`value` `None`: `HDEL`) on a key open for writing → fields changed.
pub(in crate::direct) fn hash_set(
    key: *mut RKey,
    field: *mut RString,
    value: Option<*mut RString>,
) -> c_int {
    // SAFETY: a hash key open for writing (or absent); a live field and value (or the delete
    // sentinel); NULL ends the list.
    unsafe {
        raw::RedisModule_HashSet.unwrap()(
            key,
            raw::REDISMODULE_HASH_NONE as c_int,
            field,
            value.unwrap_or(HASH_DELETE),
            ptr::null_mut::<RString>(),
        )
    }
}

/// `DEL` of a key open for writing.
pub(in crate::direct) fn delete_key(key: *mut RKey) {
    // SAFETY: a key open for writing.
    unsafe { raw::RedisModule_DeleteKey.unwrap()(key) };
}

/// `SET` of a key open for writing (absent or a string): its value becomes `value`, any expiry
/// removed (as a plain `SET` does).
pub(in crate::direct) fn string_set(key: *mut RKey, value: *mut RString) -> bool {
    // SAFETY: a key open for writing and a live string object (the API copies or retains it).
    unsafe { raw::RedisModule_StringSet.unwrap()(key, value) == raw::REDISMODULE_OK as c_int }
}

/// The absolute expiry, Unix time in ms, of a key open for writing that exists.
pub(in crate::direct) fn set_abs_expire(key: *mut RKey, at_ms: i64) -> bool {
    // SAFETY: a key open for writing that holds a value.
    unsafe { raw::RedisModule_SetAbsExpire.unwrap()(key, at_ms) == raw::REDISMODULE_OK as c_int }
}

/// A stream entry id: `<ms>-<seq>`.
pub(in crate::direct) type StreamId = (u64, u64);

/// `XADD <key> * <fields…>` on a key open for writing (a stream or absent): the new entry's id,
/// or `None` when the key holds another type. `fields` alternate names and values.
pub(in crate::direct) fn stream_add(key: *mut RKey, fields: &[*mut RString]) -> Option<StreamId> {
    let mut id = raw::RedisModuleStreamID { ms: 0, seq: 0 };
    let flags = raw::REDISMODULE_STREAM_ADD_AUTOID as c_int;
    // SAFETY: a key open for writing; `fields` holds `2 * numfields` live strings, which the
    // server copies into the stream.
    let done = unsafe {
        raw::RedisModule_StreamAdd.unwrap()(
            key,
            flags,
            &mut id,
            fields.as_ptr().cast_mut(),
            (fields.len() / 2) as i64,
        )
    };
    (done == raw::Status::Ok as c_int).then_some((id.ms, id.seq))
}

/// `XTRIM <key> MAXLEN ~ <maxlen>` (whole nodes only, at most 100 nodes' worth per call, as
/// `XADD … MAXLEN ~` trims) on an open stream → the entries deleted.
pub(in crate::direct) fn stream_trim_len(key: *mut RKey, maxlen: i64) -> i64 {
    let approx = raw::REDISMODULE_STREAM_TRIM_APPROX as c_int;
    // SAFETY: a stream key open for writing.
    unsafe { raw::RedisModule_StreamTrimByLength.unwrap()(key, approx, maxlen) }.max(0)
}

/// `XTRIM <key> MINID ~ <ms>-0` on an open stream → the entries deleted.
pub(in crate::direct) fn stream_trim_id(key: *mut RKey, ms: u64) -> i64 {
    let approx = raw::REDISMODULE_STREAM_TRIM_APPROX as c_int;
    let mut id = raw::RedisModuleStreamID { ms, seq: 0 };
    // SAFETY: a stream key open for writing; the id is read during the call.
    unsafe { raw::RedisModule_StreamTrimByID.unwrap()(key, approx, &mut id) }.max(0)
}

/// The id of the first entry of an open stream, if it has one.
pub(in crate::direct) fn stream_first_id(key: *mut RKey) -> Option<StreamId> {
    let mut id = raw::RedisModuleStreamID { ms: 0, seq: 0 };
    let mut fields: c_long = 0;
    // SAFETY: an open stream key with no iterator running; the iterator is stopped before
    // returning.
    unsafe {
        if raw::RedisModule_StreamIteratorStart.unwrap()(key, 0, ptr::null_mut(), ptr::null_mut())
            != raw::Status::Ok as c_int
        {
            return None;
        }
        let found = raw::RedisModule_StreamIteratorNextID.unwrap()(key, &mut id, &mut fields)
            == raw::Status::Ok as c_int;
        raw::RedisModule_StreamIteratorStop.unwrap()(key);
        found.then_some((id.ms, id.seq))
    }
}

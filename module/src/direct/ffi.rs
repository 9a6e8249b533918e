//! The module's one `unsafe` seam: every call into the module API (and one into libc, the
//! thread's CPU clock), each with its SAFETY note; no other file of the crate has an `unsafe`
//! line. The functions take the server's raw handles and
//! are `pub(super)`: only `direct/` calls them, with handles it holds — a context for its command
//! (or the load hook), an argument for its command, an interned string forever, a created string
//! until its `Str` drops, an open key until its `Key` drops.

use std::ffi::{c_char, c_int, c_long, c_longlong, CStr};
use std::ptr;

use valkey_module::raw;

pub(super) type RString = raw::RedisModuleString;
pub(super) type RKey = raw::RedisModuleKey;
pub(super) type RCtx = raw::RedisModuleCtx;

/// `REDISMODULE_HASH_DELETE` (a sentinel pointer in `redismodule.h`).
const HASH_DELETE: *mut RString = ptr::without_provenance_mut(1);

/// A string object kept for the life of the process (created at load, never freed), shared by
/// every command.
#[derive(Clone, Copy)]
pub(super) struct Shared(pub(super) *mut RString);

// SAFETY: a `Shared` string is created once at load and never freed or written afterwards; every
// command that reads it runs on the server's main thread.
unsafe impl Send for Shared {}
// SAFETY: as above: never mutated after load, read on the main thread only.
unsafe impl Sync for Shared {}

/// The load hook: closing a key opened for writing no longer signals it.
pub(super) fn no_implicit_signal_modified(ctx: *mut RCtx) {
    let option = raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int;
    // SAFETY: the load hook's live context.
    unsafe { raw::RedisModule_SetModuleOptions.unwrap()(ctx, option) };
}

/// The load hook: applies the server's values (config file, command line) to the module's
/// registered configs.
pub(super) fn load_configs(ctx: *mut RCtx) -> bool {
    // SAFETY: the load hook's live context, after the configs were registered.
    unsafe { raw::RedisModule_LoadConfigs.unwrap()(ctx) == raw::Status::Ok as c_int }
}

/// A new string object with `bytes` (copied). With a NULL `ctx` it lives until freed.
pub(super) fn create_string(ctx: *mut RCtx, bytes: &[u8]) -> *mut RString {
    // SAFETY: the pointer and length describe `bytes`; the server copies them.
    unsafe {
        raw::RedisModule_CreateString.unwrap()(ctx, bytes.as_ptr().cast::<c_char>(), bytes.len())
    }
}

/// Frees a string object this module created (or the server handed over).
pub(super) fn free_string(ctx: *mut RCtx, s: *mut RString) {
    // SAFETY: a string owned by the caller, freed once.
    unsafe { raw::RedisModule_FreeString.unwrap()(ctx, s) };
}

/// The bytes of a live string object; valid while it lives (its owner bounds `'a`).
pub(super) fn string_bytes<'a>(s: *const RString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: a live string object; the pointer and length describe its bytes.
    unsafe {
        let p = raw::RedisModule_StringPtrLen.unwrap()(s, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

/// The `argc` argument strings of a command, as the server passes them.
pub(super) fn arguments<'a>(argv: *mut *mut RString, argc: c_int) -> &'a [*mut RString] {
    if argv.is_null() || argc <= 0 {
        return &[];
    }
    // SAFETY: the server calls a handler with `argc` live argument strings that outlive the call.
    unsafe { std::slice::from_raw_parts(argv, argc as usize) }
}

/// The command's cached clock in microseconds.
pub(super) fn cached_micros() -> i64 {
    // SAFETY: resolved at load; takes no arguments.
    unsafe { raw::RedisModule_CachedMicroseconds.unwrap()() }
}

/// The database a context has selected.
pub(super) fn selected_db(ctx: *mut RCtx) -> c_int {
    // SAFETY: a live context.
    unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx) }
}

/// Selects database `db` for a context; `false` when out of range.
pub(super) fn select_db(ctx: *mut RCtx, db: c_int) -> bool {
    // SAFETY: a live context; the server checks the index.
    unsafe { raw::RedisModule_SelectDb.unwrap()(ctx, db) == raw::Status::Ok as c_int }
}

/// This thread's CPU time (user + system) in µs, `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; 0
/// when the clock cannot be read.
pub(super) fn thread_cpu_micros() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a live timespec the call fills.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec * 1_000_000 + ts.tv_nsec / 1000
}

/// The context's flags (`REDISMODULE_CTX_FLAGS_*`).
pub(super) fn context_flags(ctx: *mut RCtx) -> c_int {
    // SAFETY: a live context.
    unsafe { raw::RedisModule_GetContextFlags.unwrap()(ctx) }
}

/// Opens `name` read-only, or for reading and writing. NULL: absent and opened read-only.
pub(super) fn open_key(ctx: *mut RCtx, name: *mut RString, write: bool) -> *mut RKey {
    let mode = if write {
        raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
    } else {
        raw::REDISMODULE_READ
    };
    // SAFETY: a live context and key name; the server keeps its own reference to the name.
    unsafe { raw::RedisModule_OpenKey.unwrap()(ctx, name, mode as c_int).cast() }
}

/// Closes a key (NULL accepted).
pub(super) fn close_key(key: *mut RKey) {
    // SAFETY: NULL, or a key opened by `open_key` and closed once.
    unsafe { raw::RedisModule_CloseKey.unwrap()(key) };
}

/// The type of an open key (`REDISMODULE_KEYTYPE_*`; NULL: absent, `EMPTY`).
pub(super) fn key_type(key: *mut RKey) -> isize {
    // SAFETY: `KeyType` accepts NULL or an open key.
    unsafe { raw::RedisModule_KeyType.unwrap()(key) as isize }
}

/// The bytes of an open string key, valid while the key is open.
pub(super) fn string_value<'a>(key: *mut RKey) -> &'a [u8] {
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
pub(super) fn value_length(key: *mut RKey) -> usize {
    // SAFETY: an open key.
    unsafe { raw::RedisModule_ValueLength.unwrap()(key) }
}

/// `ZSCORE`: the member's score in an open sorted set.
pub(super) fn zset_score(key: *mut RKey, member: *mut RString) -> Option<f64> {
    let mut score = 0f64;
    // SAFETY: an open sorted-set key and a live member string.
    let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(key, member, &mut score) };
    (found == raw::Status::Ok as c_int).then_some(score)
}

/// The members of an open sorted set with `min ≤ score ≤ max` (`max` excluded when asked),
/// lowest first, at most `limit`, appended to `out`.
pub(super) fn zset_range(
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
pub(super) fn zset_add(
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
pub(super) fn zset_rem(key: *mut RKey, member: *mut RString) -> Option<bool> {
    let mut deleted: c_int = 0;
    // SAFETY: a key open for writing and a live member string.
    let done = unsafe { raw::RedisModule_ZsetRem.unwrap()(key, member, &mut deleted) };
    (done == raw::Status::Ok as c_int).then_some(deleted != 0)
}

/// `HGET`: a field of an open hash, copied.
pub(super) fn hash_get(ctx: *mut RCtx, key: *mut RKey, field: *mut RString) -> Option<Vec<u8>> {
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
pub(super) fn hash_set(key: *mut RKey, field: *mut RString, value: Option<*mut RString>) -> c_int {
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
pub(super) fn delete_key(key: *mut RKey) {
    // SAFETY: a key open for writing.
    unsafe { raw::RedisModule_DeleteKey.unwrap()(key) };
}

/// `SET` of a key open for writing (absent or a string): its value becomes `value`, any expiry
/// removed (as a plain `SET` does).
pub(super) fn string_set(key: *mut RKey, value: *mut RString) -> bool {
    // SAFETY: a key open for writing and a live string object (the API copies or retains it).
    unsafe { raw::RedisModule_StringSet.unwrap()(key, value) == raw::REDISMODULE_OK as c_int }
}

/// The absolute expiry, Unix time in ms, of a key open for writing that exists.
pub(super) fn set_abs_expire(key: *mut RKey, at_ms: i64) -> bool {
    // SAFETY: a key open for writing that holds a value.
    unsafe { raw::RedisModule_SetAbsExpire.unwrap()(key, at_ms) == raw::REDISMODULE_OK as c_int }
}

/// A stream entry id: `<ms>-<seq>`.
pub(super) type StreamId = (u64, u64);

/// `XADD <key> * <fields…>` on a key open for writing (a stream or absent): the new entry's id,
/// or `None` when the key holds another type. `fields` alternate names and values.
pub(super) fn stream_add(key: *mut RKey, fields: &[*mut RString]) -> Option<StreamId> {
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
pub(super) fn stream_trim_len(key: *mut RKey, maxlen: i64) -> i64 {
    let approx = raw::REDISMODULE_STREAM_TRIM_APPROX as c_int;
    // SAFETY: a stream key open for writing.
    unsafe { raw::RedisModule_StreamTrimByLength.unwrap()(key, approx, maxlen) }.max(0)
}

/// `XTRIM <key> MINID ~ <ms>-0` on an open stream → the entries deleted.
pub(super) fn stream_trim_id(key: *mut RKey, ms: u64) -> i64 {
    let approx = raw::REDISMODULE_STREAM_TRIM_APPROX as c_int;
    let mut id = raw::RedisModuleStreamID { ms, seq: 0 };
    // SAFETY: a stream key open for writing; the id is read during the call.
    unsafe { raw::RedisModule_StreamTrimByID.unwrap()(key, approx, &mut id) }.max(0)
}

/// The id of the first entry of an open stream, if it has one.
pub(super) fn stream_first_id(key: *mut RKey) -> Option<StreamId> {
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

/// `WATCH` / client-side-caching invalidation of `key`.
pub(super) fn signal_modified(ctx: *mut RCtx, key: *mut RString) {
    // SAFETY: a live context and key name.
    unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(ctx, key) };
}

/// One keyspace notification.
pub(super) fn notify(ctx: *mut RCtx, class: c_int, event: &CStr, key: *mut RString) {
    // SAFETY: a live context, a NUL-terminated event name, a live key name.
    unsafe { raw::RedisModule_NotifyKeyspaceEvent.unwrap()(ctx, class, event.as_ptr(), key) };
}

/// Replicates `command <args…>` to the replicas and (`aof`) the AOF.
pub(super) fn replicate(ctx: *mut RCtx, command: &CStr, args: &[*mut RString], aof: bool) {
    let fmt: &CStr = if aof { c"v" } else { c"vA" };
    // SAFETY: `v` takes an array of live string objects and its length; the server takes its
    // own references.
    unsafe {
        raw::RedisModule_Replicate.unwrap()(
            ctx,
            command.as_ptr(),
            fmt.as_ptr(),
            args.as_ptr(),
            args.len(),
        )
    };
}

/// Replicates `ZADD <key> <n> <member>` (`zadd`) or `HINCRBY <key> <member> <n>`: the integer
/// as its decimal text.
pub(super) fn replicate_with_integer(
    ctx: *mut RCtx,
    zadd: bool,
    key: *mut RString,
    n: i64,
    member: *mut RString,
) {
    let n = n as c_longlong;
    // SAFETY: `s` takes a live string object, `l` a long long; the server takes its own references.
    unsafe {
        let replicate = raw::RedisModule_Replicate.unwrap();
        if zadd {
            replicate(ctx, c"ZADD".as_ptr(), c"sls".as_ptr(), key, n, member)
        } else {
            replicate(ctx, c"HINCRBY".as_ptr(), c"ssl".as_ptr(), key, member, n)
        }
    };
}

/// `SPUBLISH <channel> <message>` through the module API (no channel permission checked):
/// delivered to this node's shard-channel subscribers and, in cluster mode, to the other nodes
/// of its shard over the cluster bus.
pub(super) fn publish_shard(ctx: *mut RCtx, channel: *mut RString, message: *mut RString) {
    // SAFETY: a live context, channel and message.
    unsafe { raw::RedisModule_PublishMessageShard.unwrap()(ctx, channel, message) };
}

/// A command callback as the server calls it (a handler, or a blocked client's reply or
/// timeout callback: the blocked command's arguments).
pub(super) type Callback = extern "C" fn(*mut RCtx, *mut *mut RString, c_int) -> c_int;

/// `RedisModule_BlockClientOnKeys`: the calling client waits on `keys` until a callback answers
/// it — `ready` each time one of them is signalled ready (it answers and returns OK, or returns
/// ERR to keep waiting), `timed_out` after `timeout_ms` (> 0). No private data. Only where the
/// client may wait (not inside `MULTI`, a script or a reply callback: the server would answer
/// an error itself).
pub(super) fn block_on_keys(
    ctx: *mut RCtx,
    (ready, timed_out): (Callback, Callback),
    timeout_ms: i64,
    keys: &[*mut RString],
) {
    let ready: raw::RedisModuleCmdFunc = Some(ready);
    let timed_out: raw::RedisModuleCmdFunc = Some(timed_out);
    // SAFETY: the command's live context; live key strings, which the server copies (it keeps
    // its own references); callbacks with the signature it calls; no private data to free. The
    // handle is the server's to free (a client blocked on keys is never unblocked by the module).
    unsafe {
        raw::RedisModule_BlockClientOnKeys.unwrap()(
            ctx,
            ready,
            timed_out,
            None,
            timeout_ms as c_longlong,
            keys.as_ptr().cast_mut(),
            keys.len() as c_int,
            ptr::null_mut(),
        )
    };
}

/// `RedisModule_SignalKeyAsReady`: the clients waiting on `key` get their reply callback after
/// the running command (when the key exists then).
pub(super) fn signal_key_as_ready(ctx: *mut RCtx, key: *mut RString) {
    // SAFETY: a live context and key name; the server takes its own reference.
    unsafe { raw::RedisModule_SignalKeyAsReady.unwrap()(ctx, key) };
}

/// Whether the calling client's user may access `key` with `flags` (`REDISMODULE_CMD_KEY_*`);
/// a denial is logged in `ACL LOG` (reason `key`). `true` when the context has no user.
pub(super) fn caller_may(ctx: *mut RCtx, key: *mut RString, flags: u32) -> bool {
    // SAFETY: a live context and key name; the user name and the user are freed once each.
    unsafe {
        let user_name = raw::RedisModule_GetCurrentUserName.unwrap()(ctx);
        if user_name.is_null() {
            return true;
        }
        let user = raw::RedisModule_GetModuleUserFromUserName.unwrap()(user_name);
        let allowed = user.is_null()
            || raw::RedisModule_ACLCheckKeyPermissions.unwrap()(user, key, flags as c_int)
                == raw::REDISMODULE_OK as c_int;
        if !user.is_null() {
            raw::RedisModule_FreeModuleUser.unwrap()(user);
        }
        if !allowed {
            raw::RedisModule_ACLAddLogEntryByUserName.unwrap()(
                ctx,
                user_name,
                key,
                raw::RedisModuleACLLogEntryReason_REDISMODULE_ACL_LOG_KEY,
            );
        }
        raw::RedisModule_FreeString.unwrap()(ctx, user_name);
        allowed
    }
}

/// One part of a reply.
#[derive(Debug, PartialEq)]
pub(super) enum Out<'a> {
    Integer(i64),
    Bytes(&'a [u8]),
    Null,
    /// An array of the next `n` parts.
    Array(usize),
    /// One error line (without the leading `-`).
    Error(&'a CStr),
}

/// Sends one part of the reply.
pub(super) fn reply(ctx: *mut RCtx, out: Out) {
    // SAFETY: the live command context; a buffer is valid for its length (the server copies
    // it); an error line is NUL-terminated.
    unsafe {
        match out {
            Out::Integer(n) => raw::RedisModule_ReplyWithLongLong.unwrap()(ctx, n),
            Out::Bytes(b) => {
                raw::RedisModule_ReplyWithStringBuffer.unwrap()(ctx, b.as_ptr().cast(), b.len())
            }
            Out::Null => raw::RedisModule_ReplyWithNull.unwrap()(ctx),
            Out::Array(n) => raw::RedisModule_ReplyWithArray.unwrap()(ctx, n as c_long),
            Out::Error(line) => raw::RedisModule_ReplyWithError.unwrap()(ctx, line.as_ptr()),
        };
    }
}

/// Creates a command with no legacy key positions; then gives it `info` (summary, arity, key
/// specs, terminated by a zeroed spec). `false` when the server refuses either.
pub(super) fn create_command(
    ctx: *mut RCtx,
    (name, flags): (&CStr, &CStr),
    handler: raw::RedisModuleCmdFunc,
    info: &mut raw::RedisModuleCommandInfo,
) -> bool {
    // SAFETY: the load hook's live context; NUL-terminated strings; the info and its key specs
    // are read (copied) by the server during the call.
    unsafe {
        let created = raw::RedisModule_CreateCommand.unwrap()(
            ctx,
            name.as_ptr(),
            handler,
            flags.as_ptr(),
            0,
            0,
            0,
        );
        if created != raw::Status::Ok as c_int {
            return false;
        }
        let command = raw::RedisModule_GetCommand.unwrap()(ctx, name.as_ptr());
        !command.is_null()
            && raw::RedisModule_SetCommandInfo.unwrap()(command, info) == raw::Status::Ok as c_int
    }
}

/// The terminator of a key-spec array: an all-zero spec (`begin_search_type` 0).
pub(super) fn zeroed_key_spec() -> raw::RedisModuleCommandKeySpec {
    // SAFETY: the struct is plain data (integers, pointers, unions of them): all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// A key spec's begin-search index and find-keys range `(lastkey, keystep, limit)`, when it is
/// of those types.
#[cfg(test)]
pub(super) fn index_range(spec: &raw::RedisModuleCommandKeySpec) -> Option<(i32, (i32, i32, i32))> {
    let index = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    let range = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    if spec.begin_search_type != index || spec.find_keys_type != range {
        return None;
    }
    // SAFETY: the types checked above name the unions' variants.
    let (pos, r) = unsafe { (spec.bs.index.pos, spec.fk.range) };
    Some((pos, (r.lastkey, r.keystep, r.limit)))
}

//! The module API beside keys: notifications, replication, publishing, blocking on keys, ACL
//! checks, replies, command registration (each call with its SAFETY note; see the parent module).

use std::ffi::{c_int, c_long, c_longlong, CStr};
use std::ptr;

use valkey_module::raw;

use super::*;

/// `WATCH` / client-side-caching invalidation of `key`.
pub(in crate::direct) fn signal_modified(ctx: *mut RCtx, key: *mut RString) {
    // SAFETY: a live context and key name.
    unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(ctx, key) };
}

/// One keyspace notification.
pub(in crate::direct) fn notify(ctx: *mut RCtx, class: c_int, event: &CStr, key: *mut RString) {
    // SAFETY: a live context, a NUL-terminated event name, a live key name.
    unsafe { raw::RedisModule_NotifyKeyspaceEvent.unwrap()(ctx, class, event.as_ptr(), key) };
}

/// Replicates `command <args…>` to the replicas and (`aof`) the AOF.
pub(in crate::direct) fn replicate(
    ctx: *mut RCtx,
    command: &CStr,
    args: &[*mut RString],
    aof: bool,
) {
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
pub(in crate::direct) fn replicate_with_integer(
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
pub(in crate::direct) fn publish_shard(
    ctx: *mut RCtx,
    channel: *mut RString,
    message: *mut RString,
) {
    // SAFETY: a live context, channel and message.
    unsafe { raw::RedisModule_PublishMessageShard.unwrap()(ctx, channel, message) };
}

/// A command callback as the server calls it (a handler, or a blocked client's reply or
/// timeout callback: the blocked command's arguments).
pub(in crate::direct) type Callback = extern "C" fn(*mut RCtx, *mut *mut RString, c_int) -> c_int;

/// `RedisModule_BlockClientOnKeys`: the calling client waits on `keys` until a callback answers
/// it — `ready` each time one of them is signalled ready (it answers and returns OK, or returns
/// ERR to keep waiting), `timed_out` after `timeout_ms` (> 0). No private data. Only where the
/// client may wait (not inside `MULTI`, a script or a reply callback: the server would answer
/// an error itself).
pub(in crate::direct) fn block_on_keys(
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
pub(in crate::direct) fn signal_key_as_ready(ctx: *mut RCtx, key: *mut RString) {
    // SAFETY: a live context and key name; the server takes its own reference.
    unsafe { raw::RedisModule_SignalKeyAsReady.unwrap()(ctx, key) };
}

/// Whether the calling client's user may access `key` with `flags` (`REDISMODULE_CMD_KEY_*`);
/// a denial is logged in `ACL LOG` (reason `key`). `true` when the context has no user.
pub(in crate::direct) fn caller_may(ctx: *mut RCtx, key: *mut RString, flags: u32) -> bool {
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
pub(in crate::direct) enum Out<'a> {
    Integer(i64),
    Bytes(&'a [u8]),
    Null,
    /// An array of the next `n` parts.
    Array(usize),
    /// One error line (without the leading `-`).
    Error(&'a CStr),
}

/// Sends one part of the reply.
pub(in crate::direct) fn reply(ctx: *mut RCtx, out: Out) {
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
pub(in crate::direct) fn create_command(
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
pub(in crate::direct) fn zeroed_key_spec() -> raw::RedisModuleCommandKeySpec {
    // SAFETY: the struct is plain data (integers, pointers, unions of them): all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// A key spec's begin-search index and find-keys range `(lastkey, keystep, limit)`, when it is
/// of those types.
#[cfg(test)]
pub(in crate::direct) fn index_range(
    spec: &raw::RedisModuleCommandKeySpec,
) -> Option<(i32, (i32, i32, i32))> {
    let index = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    let range = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    if spec.begin_search_type != index || spec.find_keys_type != range {
        return None;
    }
    // SAFETY: the types checked above name the unions' variants.
    let (pos, r) = unsafe { (spec.bs.index.pos, spec.fk.range) };
    Some((pos, (r.lastkey, r.keystep, r.limit)))
}

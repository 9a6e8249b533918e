//! The module's one `unsafe` seam: every call into the module API (and one into libc, the
//! thread's CPU clock), each with its SAFETY note; no module of the crate outside this one has an
//! `unsafe` line. The functions take the server's raw handles and are `pub(in crate::direct)`:
//! only `direct/` calls them, with handles it holds — a context for its command (or the load
//! hook), an argument for its command, an interned string forever, a created string until its
//! `Str` drops, an open key until its `Key` drops.
//!
//! By concern: this file (types, strings, the context, clocks), [`keys`] (open keys: strings,
//! sorted sets, hashes, streams) and [`server`] (notifications, replication, publishing, blocking,
//! ACL checks, replies, command registration).

mod keys;
mod server;

pub(in crate::direct) use keys::*;
pub(in crate::direct) use server::*;

use std::ffi::{c_char, c_int};
use std::ptr;

use valkey_module::raw;

pub(in crate::direct) type RString = raw::RedisModuleString;
pub(in crate::direct) type RKey = raw::RedisModuleKey;
pub(in crate::direct) type RCtx = raw::RedisModuleCtx;

/// `REDISMODULE_HASH_DELETE` (a sentinel pointer in `redismodule.h`).
const HASH_DELETE: *mut RString = ptr::without_provenance_mut(1);

/// A string object kept for the life of the process (created at load, never freed), shared by
/// every command.
#[derive(Clone, Copy)]
pub(in crate::direct) struct Shared(pub(in crate::direct) *mut RString);

// SAFETY: a `Shared` string is created once at load and never freed or written afterwards; every
// command that reads it runs on the server's main thread.
unsafe impl Send for Shared {}
// SAFETY: as above: never mutated after load, read on the main thread only.
unsafe impl Sync for Shared {}

/// The load hook: the module's options (the call sets them all at once): closing a key opened
/// for writing no longer signals it, and the module handles atomic slot migration (Valkey 9's
/// `CLUSTER MIGRATESLOTS`, refused for the whole cluster while a loaded module does not declare
/// it; a Valkey 8 server keeps the bit and never reads it).
pub(in crate::direct) fn set_module_options(ctx: *mut RCtx) {
    let options = raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int
        | raw::VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION as c_int;
    // SAFETY: the load hook's live context.
    unsafe { raw::RedisModule_SetModuleOptions.unwrap()(ctx, options) };
}

/// The load hook: applies the server's values (config file, command line) to the module's
/// registered configs.
pub(in crate::direct) fn load_configs(ctx: *mut RCtx) -> bool {
    // SAFETY: the load hook's live context, after the configs were registered.
    unsafe { raw::RedisModule_LoadConfigs.unwrap()(ctx) == raw::Status::Ok as c_int }
}

/// A new string object with `bytes` (copied). With a NULL `ctx` it lives until freed.
pub(in crate::direct) fn create_string(ctx: *mut RCtx, bytes: &[u8]) -> *mut RString {
    // SAFETY: the pointer and length describe `bytes`; the server copies them.
    unsafe {
        raw::RedisModule_CreateString.unwrap()(ctx, bytes.as_ptr().cast::<c_char>(), bytes.len())
    }
}

/// Frees a string object this module created (or the server handed over).
pub(in crate::direct) fn free_string(ctx: *mut RCtx, s: *mut RString) {
    // SAFETY: a string owned by the caller, freed once.
    unsafe { raw::RedisModule_FreeString.unwrap()(ctx, s) };
}

/// The bytes of a live string object; valid while it lives (its owner bounds `'a`).
pub(in crate::direct) fn string_bytes<'a>(s: *const RString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: a live string object; the pointer and length describe its bytes.
    unsafe {
        let p = raw::RedisModule_StringPtrLen.unwrap()(s, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

/// The `argc` argument strings of a command, as the server passes them.
pub(in crate::direct) fn arguments<'a>(argv: *mut *mut RString, argc: c_int) -> &'a [*mut RString] {
    if argv.is_null() || argc <= 0 {
        return &[];
    }
    // SAFETY: the server calls a handler with `argc` live argument strings that outlive the call.
    unsafe { std::slice::from_raw_parts(argv, argc as usize) }
}

/// The command's cached clock in microseconds.
pub(in crate::direct) fn cached_micros() -> i64 {
    // SAFETY: resolved at load; takes no arguments.
    unsafe { raw::RedisModule_CachedMicroseconds.unwrap()() }
}

/// The database a context has selected.
pub(in crate::direct) fn selected_db(ctx: *mut RCtx) -> c_int {
    // SAFETY: a live context.
    unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx) }
}

/// Selects database `db` for a context; `false` when out of range.
pub(in crate::direct) fn select_db(ctx: *mut RCtx, db: c_int) -> bool {
    // SAFETY: a live context; the server checks the index.
    unsafe { raw::RedisModule_SelectDb.unwrap()(ctx, db) == raw::Status::Ok as c_int }
}

/// This thread's CPU time (user + system) in µs, `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; 0
/// when the clock cannot be read.
pub(in crate::direct) fn thread_cpu_micros() -> i64 {
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
pub(in crate::direct) fn context_flags(ctx: *mut RCtx) -> c_int {
    // SAFETY: a live context.
    unsafe { raw::RedisModule_GetContextFlags.unwrap()(ctx) }
}

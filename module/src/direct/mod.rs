//! Direct access to the server through the module API: the keyspace, the caller's ACL, replies
//! and registration. Every `unsafe` line of the crate is in one module, [`ffi`]; the others here
//! are safe code over it, one concern each:
//!
//! * `strings` — string objects: interned at load ([`intern`]), an argument passed as itself, or
//!   created for the call and freed on drop;
//! * `acl` — the fence's read as the calling client ([`get_as_caller`]);
//! * `scope` — a verb's arguments ([`Args`]) and what its open keys share (their names, the
//!   signals, notifications and replication of their writes);
//! * `db` — a verb's access to the keyspace ([`Db`]): each key opened once;
//! * `key` — an open key's reads and writes ([`Key`]);
//! * `stream` — an open key's stream writes, the event bus's `XADD` and `XTRIM`;
//! * `reply` — a verb's answer sent to the client;
//! * `block` — a command whose client waits on a key ([`wait_on`]), woken by
//!   [`Db::signal_ready`];
//! * `register` — the commands created from their table ([`register`]), each with its key specs.
//!
//! A verb opens one [`Db`] over its own arguments and opens each key it touches once: keys it
//! only reads with [`Db::read`] (read-only), keys it also writes with [`Db::open`] (for writing
//! when the node takes writes). Reads return owned values; a key is closed when its [`Key`]
//! drops, and a key is never open twice at once. Each write ([`Key::zadd`], [`Key::zrem`],
//! [`Key::hset`], [`Key::hincrby`], [`Key::hdel`], [`Key::delete`], [`Key::xadd`],
//! [`Key::xtrim_minid`], [`Db::spublish`]) has exactly
//! the effects of its plain command:
//!
//! * the same change to the value (an emptied sorted set or hash is deleted, as the commands do);
//! * the same signals, only when the command would have sent them: `WATCH` invalidation and
//!   client-side-caching invalidation (`SignalModifiedKey`), then the command's keyspace
//!   notifications (`zadd`, `zrem`, `hset`, `hdel`, `del`), in the command's order;
//! * the plain command replicated (AOF and replicas) exactly when the command itself would have
//!   been propagated, i.e. when it changed something; the AOF and replicas never see `EMQ.*`.
//!
//! The module sets `NO_IMPLICIT_SIGNAL_MODIFIED` at load ([`init`]), so closing a key opened for
//! writing signals nothing by itself: a write that changes nothing invalidates no `WATCH`, as
//! with the plain command.
//!
//! The FFI paths are covered by the module's integration tests against real servers
//! (`test/module.test.ts`, `test/module.guard.test.ts`, `test/module.keyspecs.test.ts`, and the
//! differential harness `test/harness.test.ts` / `npm run harness`); the pure parts have unit
//! tests here.

mod acl;
mod block;
mod db;
mod ffi;
mod key;
mod register;
mod reply;
mod scope;
mod stream;
mod strings;

use valkey_module::Context;

pub use acl::{get_as_caller, get_as_module};
pub use block::{may_wait, wait_on, Retry, Wait};
pub use db::Db;
pub use key::{Key, Kind, When, Zadd, HSET_MAX_PAIRS};
pub use register::{handler, register, Command, Handler, KeyArg, Run, Verb};
pub use scope::Args;
pub use stream::MAX_PAIRS;

/// Module load: closing a key opened for writing no longer signals it (every write signals
/// explicitly, exactly when its plain command would); the module declares it handles atomic
/// slot migration (docs/cluster.md); `strings` (at most 64 bytes each) are interned.
pub fn init(ctx: &Context, strings: &[&'static [u8]]) {
    ffi::set_module_options(ctx.ctx);
    strings::intern(strings);
}

/// The calling thread's CPU time in µs (user + system): what a piece of work cost the server
/// thread, without the time the OS gave other processes meanwhile.
pub fn thread_cpu_micros() -> i64 {
    ffi::thread_cpu_micros()
}

/// Module load: the server's values for the module's registered configs; `false` if refused.
pub fn load_configs(ctx: &Context) -> bool {
    ffi::load_configs(ctx.ctx)
}

/// The command's cached clock in microseconds (the value `TIME` reports inside the same
/// command, `MULTI/EXEC` or script).
pub fn cached_micros() -> i64 {
    ffi::cached_micros()
}

/// The database `ctx` has selected (a keyspace notification's, a timer's).
pub fn selected_db(ctx: &Context) -> i32 {
    ffi::selected_db(ctx.ctx)
}

/// Selects database `db` for `ctx` (a timer's context, before it opens a queue's keys);
/// `false` when there is no such database.
pub fn select_db(ctx: &Context, db: i32) -> bool {
    ffi::select_db(ctx.ctx, db)
}

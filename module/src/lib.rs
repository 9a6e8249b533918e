//! EchoMQ's native Valkey module (wire 6): each job-core transition as one `EMQ.<VERB>` command,
//! with the same keys and values as its Lua script twin.
//!
//! This file only registers commands. The protocol is `docs/protocol.md`.

pub mod clock;
pub mod direct;
pub mod errors;
pub mod fence;
pub mod gates;
pub mod guard;
pub mod keyspace;
pub mod moves;
pub mod shape;
pub mod store;
pub mod values;
pub mod verbs;

use valkey_module::{valkey_module, Context, Status, ValkeyResult, ValkeyString};

use crate::errors::answer;
use crate::shape::Form;
use crate::verbs::{admin, install, jobs, lease, timers, version};

/// The module's version as the server lists it: major * 10000 + minor * 100 + patch (0.1.0).
const MODULE_VERSION_NUMBER: i32 = 100;

/// The oldest server this module runs on.
const MIN_VALKEY_MAJOR: u32 = 8;

/// `EMQ.VERSION` → `["wire", "echomq:6.0.0", "module", "0.1.0", "verbs", [<token>…]]`
fn emq_version(ctx: &Context, args: Vec<ValkeyString>) -> ValkeyResult {
    answer(ctx, version::version(&args))
}

/// `EMQ.INSTALL 1 {emq}:version` → `1` branded, `0` already branded
fn emq_install(ctx: &Context, args: Vec<ValkeyString>) -> ValkeyResult {
    answer(ctx, install::install(ctx, &args))
}

/// Declares one command handler per verb: `EMQ.<VERB>` → `<family>::<function>`.
macro_rules! handlers {
    ($($(#[$doc:meta])* $handler:ident => $family:ident::$verb:ident;)*) => {
        $(
            $(#[$doc])*
            fn $handler(ctx: &Context, args: Vec<ValkeyString>) -> ValkeyResult {
                answer(ctx, $family::$verb(ctx, &args))
            }
        )*
    };
}

handlers! {
    /// `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` → `1` enqueued, `0` duplicate id
    emq_enqueue => jobs::enqueue;
    /// `EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts>`
    emq_add => jobs::add;
    /// `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>` → `[]` or `[id, payload, attempts, deadline]`
    emq_claim => jobs::claim;
    /// `EMQ.EXTEND 2 <active> <base> <id> <token> <lease_ms>` → the new deadline
    emq_extend => lease::extend;
    /// `EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>` → `1`
    emq_complete => lease::complete;
    /// `EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep>`
    emq_fail => lease::fail;
    /// `EMQ.RETRY 3 <dead> <pending> <base> <id> <extra_attempts>` → `1`
    emq_retry => admin::retry;
    /// `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>` → ids moved
    emq_promote => timers::promote;
    /// `EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>` → `[[back…], [dead…]]`
    emq_reap => timers::reap;
    /// `EMQ.REMOVE 5 <pending> <schedule> <done> <dead> <base> <id>` → `1` removed, `0` no such job
    emq_remove => admin::remove;
    /// `EMQ.PAUSE 1 <meta>` → `1` changed, `0` already paused
    emq_pause => admin::pause;
    /// `EMQ.RESUME 1 <meta>` → `1` changed, `0` not paused
    emq_resume => admin::resume;
    /// `EMQ.RESCHEDULE 3 <active> <schedule> <base> <id> <token> <delay>` → the due time
    emq_reschedule => lease::reschedule;
    /// `EMQ.REQUEUE 3 <active> <pending> <base> <id> <token>` → `1`
    emq_requeue => lease::requeue;
}

/// Key positions: the first key is argv 2 (after the command and `numkeys`).
const FIRST_KEY: i32 = 2;

/// Key positions: the last key is argv `1 + numkeys`, the form's fixed key count.
const fn last_key(form: &Form) -> i32 {
    1 + form.keys.len() as i32
}

/// The strings the verbs write and read over and over (the brand key, field names, states, the
/// lease epoch):
/// created once at load instead of once per use.
fn interned(run_id: &'static [u8]) -> [&'static [u8]; 18] {
    [
        keyspace::VERSION_KEY,
        b"state",
        b"attempts",
        b"payload",
        b"priority",
        b"max_attempts",
        b"lease_epoch",
        b"result",
        b"error",
        b"paused",
        b"pending",
        b"active",
        b"scheduled",
        b"completed",
        b"dead",
        b"0",
        b"1",
        run_id,
    ]
}

/// Refuses to load on a server older than Valkey 8; then sets up the key API.
fn init(ctx: &Context, _args: &[ValkeyString]) -> Status {
    let info = ctx.server_info("server");
    let major = info
        .field("valkey_version")
        .and_then(|v| v.try_as_str().ok()?.split('.').next()?.parse::<u32>().ok());
    match major {
        Some(major) if major >= MIN_VALKEY_MAJOR => {
            direct::init(ctx, &interned(clock::run_id(ctx)));
            Status::Ok
        }
        _ => {
            ctx.log_warning("echomq needs Valkey 8.0 or newer");
            Status::Err
        }
    }
}

#[cfg(not(test))]
macro_rules! allocator {
    () => {
        valkey_module::alloc::ValkeyAlloc
    };
}

#[cfg(test)]
macro_rules! allocator {
    () => {
        std::alloc::System
    };
}

valkey_module! {
    name: "echomq",
    version: MODULE_VERSION_NUMBER,
    allocator: (allocator!(), allocator!()),
    data_types: [],
    init: init,
    commands: [
        ["emq.version", emq_version, "readonly fast", 0, 0, 0],
        ["emq.install", emq_install, "write deny-oom", FIRST_KEY, last_key(&install::INSTALL), 1],
        ["emq.enqueue", emq_enqueue, "write deny-oom", FIRST_KEY, last_key(&jobs::ENQUEUE), 1],
        ["emq.add", emq_add, "write deny-oom", FIRST_KEY, last_key(&jobs::ADD), 1],
        ["emq.claim", emq_claim, "write deny-oom", FIRST_KEY, last_key(&jobs::CLAIM), 1],
        ["emq.extend", emq_extend, "write deny-oom", FIRST_KEY, last_key(&lease::EXTEND), 1],
        ["emq.complete", emq_complete, "write deny-oom", FIRST_KEY, last_key(&lease::COMPLETE), 1],
        ["emq.fail", emq_fail, "write deny-oom", FIRST_KEY, last_key(&lease::FAIL), 1],
        ["emq.retry", emq_retry, "write deny-oom", FIRST_KEY, last_key(&admin::RETRY), 1],
        ["emq.promote", emq_promote, "write deny-oom", FIRST_KEY, last_key(&timers::PROMOTE), 1],
        ["emq.reap", emq_reap, "write deny-oom", FIRST_KEY, last_key(&timers::REAP), 1],
        ["emq.remove", emq_remove, "write deny-oom", FIRST_KEY, last_key(&admin::REMOVE), 1],
        ["emq.pause", emq_pause, "write deny-oom", FIRST_KEY, last_key(&admin::PAUSE), 1],
        ["emq.resume", emq_resume, "write deny-oom", FIRST_KEY, last_key(&admin::RESUME), 1],
        ["emq.reschedule", emq_reschedule, "write deny-oom", FIRST_KEY, last_key(&lease::RESCHEDULE), 1],
        ["emq.requeue", emq_requeue, "write deny-oom", FIRST_KEY, last_key(&lease::REQUEUE), 1],
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_positions() {
        assert_eq!(last_key(&install::INSTALL), 2);
        assert_eq!(last_key(&jobs::ENQUEUE), 3);
        assert_eq!(last_key(&jobs::CLAIM), 4);
        assert_eq!(last_key(&lease::FAIL), 6);
        assert_eq!(last_key(&timers::REAP), 5);
        assert_eq!(last_key(&admin::PAUSE), 2);
    }

    #[test]
    fn version_number_matches_the_crate() {
        let parts: Vec<i32> = version::MODULE_VERSION
            .split('.')
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(
            MODULE_VERSION_NUMBER,
            parts[0] * 10000 + parts[1] * 100 + parts[2]
        );
    }
}

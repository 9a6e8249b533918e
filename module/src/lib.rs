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

use std::ffi::CStr;
use valkey_module::{valkey_module, Context, Status, ValkeyResult, ValkeyString};

use crate::direct::Command;

use crate::errors::answer;
use crate::shape::Form;
use crate::verbs::{admin, install, jobs, lease, timers, version};

/// The module's version as the server lists it: major * 10000 + minor * 100 + patch (0.2.0).
const MODULE_VERSION_NUMBER: i32 = 200;

/// The oldest server this module runs on.
const MIN_VALKEY_MAJOR: u32 = 8;

/// `EMQ.VERSION` → `["wire", "echomq:6.0.0", "module", "0.2.0", "verbs", [<token>…]]`
fn emq_version(ctx: &Context, args: Vec<ValkeyString>) -> ValkeyResult {
    answer(ctx, version::version(&args))
}

/// Every command but `EMQ.VERSION`, registered at load by [`direct::register`] (which gives each
/// its handler, in this order).
pub(crate) static COMMANDS: [Command; 15] = [
    // `EMQ.INSTALL 1 {emq}:version` → `1` branded, `0` already branded
    command(c"emq.install", install::install, &install::INSTALL),
    // `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` → `1` enqueued, `0` duplicate id
    command(c"emq.enqueue", jobs::enqueue, &jobs::ENQUEUE),
    // `EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts>`
    command(c"emq.add", jobs::add, &jobs::ADD),
    // `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>` → `[]` or `[id, payload, attempts, deadline]`
    command(c"emq.claim", jobs::claim, &jobs::CLAIM),
    // `EMQ.EXTEND 2 <active> <base> <id> <token> <lease_ms>` → the new deadline
    command(c"emq.extend", lease::extend, &lease::EXTEND),
    // `EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>` → `1`
    command(c"emq.complete", lease::complete, &lease::COMPLETE),
    // `EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep>`
    command(c"emq.fail", lease::fail, &lease::FAIL),
    // `EMQ.RETRY 3 <dead> <pending> <base> <id> <extra_attempts>` → `1`
    command(c"emq.retry", admin::retry, &admin::RETRY),
    // `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>` → ids moved
    command(c"emq.promote", timers::promote, &timers::PROMOTE),
    // `EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>` → `[[back…], [dead…]]`
    command(c"emq.reap", timers::reap, &timers::REAP),
    // `EMQ.REMOVE 5 <pending> <schedule> <done> <dead> <base> <id>` → `1` removed, `0` no such job
    command(c"emq.remove", admin::remove, &admin::REMOVE),
    // `EMQ.PAUSE 1 <meta>` → `1` changed, `0` already paused
    command(c"emq.pause", admin::pause, &admin::PAUSE),
    // `EMQ.RESUME 2 <meta> <pending>` → `1` changed, `0` not paused
    command(c"emq.resume", admin::resume, &admin::RESUME),
    // `EMQ.RESCHEDULE 3 <active> <schedule> <base> <id> <token> <delay>` → the due time
    command(c"emq.reschedule", lease::reschedule, &lease::RESCHEDULE),
    // `EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>` → `1`
    command(c"emq.requeue", lease::requeue, &lease::REQUEUE),
];

/// One entry of [`COMMANDS`]: flags by the form's class (an admission `write deny-oom`, a drain
/// `write`); its keys run from argv 2 to the form's last key.
const fn command(name: &'static CStr, verb: direct::Verb, form: &Form) -> Command {
    Command {
        name,
        verb,
        flags: form.class.flags(),
        last_key: last_key(form),
    }
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

/// Refuses to load on a server older than Valkey 8; then sets up the key API and registers
/// every command but `EMQ.VERSION` (whose handler the crate wraps).
fn init(ctx: &Context, _args: &[ValkeyString]) -> Status {
    let info = ctx.server_info("server");
    let major = info
        .field("valkey_version")
        .and_then(|v| v.try_as_str().ok()?.split('.').next()?.parse::<u32>().ok());
    match major {
        Some(major) if major >= MIN_VALKEY_MAJOR => {
            direct::init(ctx, &interned(clock::run_id(ctx)));
            if direct::register(ctx, FIRST_KEY) {
                Status::Ok
            } else {
                Status::Err
            }
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
    fn every_verb_is_registered_once_with_its_form() {
        let names: Vec<String> = COMMANDS
            .iter()
            .map(|c| c.name.to_str().unwrap().to_owned())
            .collect();
        let mut expected = vec!["emq.install".to_owned()];
        expected.extend(
            verbs::VERBS
                .iter()
                .map(|v| format!("emq.{}", v.to_lowercase())),
        );
        assert_eq!(names, expected);
        assert_eq!(COMMANDS[0].last_key, last_key(&install::INSTALL));
        for (command, form) in COMMANDS[1..].iter().zip(verbs::forms()) {
            assert_eq!(command.last_key, last_key(&form), "{}", form.verb);
        }
    }

    #[test]
    fn admissions_deny_oom_drains_do_not() {
        for command in &COMMANDS {
            let name = command.name.to_str().unwrap();
            let admission = matches!(
                name,
                "emq.install" | "emq.enqueue" | "emq.add" | "emq.retry"
            );
            let want = if admission {
                c"write deny-oom"
            } else {
                c"write"
            };
            assert_eq!(command.flags, want, "{name}");
        }
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

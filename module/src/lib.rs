//! EchoMQ's native Valkey module (wire 6): each job-core transition as one `EMQ.<VERB>` command,
//! with the same keys and values as its Lua script twin.
//!
//! This file only registers commands. The protocol is `docs/protocol.md`.

pub mod bus;
pub mod clock;
pub mod direct;
pub mod errors;
pub mod fence;
pub mod gates;
pub mod guard;
pub mod keyspace;
pub mod limits;
pub mod moves;
pub mod open;
pub mod outbox;
pub mod protocol;
pub mod shape;
pub mod store;
pub mod ticker;
pub mod values;
pub mod verbs;

use valkey_module::{valkey_module, Context, Status, ValkeyString};

/// The registration table, made from the protocol data (`protocol/verbs/<verb>.json`) by
/// `build.rs`: per command its name `emq.<verb>`, its flags (from its class), summary, arity,
/// key specs (one per declared key, with its flags) and handler `verbs::<family>::<verb>`.
mod commands {
    include!(concat!(env!("OUT_DIR"), "/commands.rs"));
}
pub use commands::COMMANDS;

/// The module's version as the server lists it: major * 10000 + minor * 100 + patch (0.5.0).
const MODULE_VERSION_NUMBER: i32 = 500;

/// The oldest server this module runs on.
const MIN_VALKEY_MAJOR: u32 = 8;

/// The strings the verbs write and read over and over (the brand key, field names, states, the
/// lease epoch):
/// created once at load instead of once per use.
fn interned(run_id: &'static [u8]) -> [&'static [u8]; 44] {
    [
        keyspace::VERSION_KEY,
        b"state",
        b"attempts",
        b"payload",
        b"priority",
        b"max_attempts",
        b"lease_epoch",
        b"processed_on",
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
        // the event bus: fields, kinds, settings, the replicated trims' words
        b"event",
        b"id",
        b"reason",
        b"delay",
        b"data",
        b"added",
        b"delayed",
        b"promoted",
        b"progress",
        b"failed",
        b"retrying",
        b"stalled",
        b"requeued",
        b"removed",
        b"resumed",
        b"lease expired",
        b"events_maxlen",
        b"events_maxage",
        b"MAXLEN",
        b"MINID",
        b"=",
        b"logs",
        b"attempt",
        b"2",
        b"3",
    ]
}

/// Refuses to load on a server older than Valkey 8; then sets up the key API, registers every
/// command of [`COMMANDS`] and starts the server-side timers ([`ticker`]).
fn init(ctx: &Context, args: &[ValkeyString]) -> Status {
    let args: Vec<&[u8]> = args.iter().map(|arg| arg.as_slice()).collect();
    if let Err(message) = ticker::configure(ctx, &args) {
        ctx.log_warning(&message);
        return Status::Err;
    }
    let info = ctx.server_info("server");
    let major = info
        .field("valkey_version")
        .and_then(|v| v.try_as_str().ok()?.split('.').next()?.parse::<u32>().ok());
    match major {
        Some(major) if major >= MIN_VALKEY_MAJOR => {
            direct::init(ctx, &interned(clock::run_id(ctx)));
            if direct::register(ctx, &COMMANDS) {
                ticker::init(ctx);
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
    commands: [],
    event_handlers: [
        [@ZSET @GENERIC @LOADED: ticker::changed],
    ],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Class;
    use crate::protocol::{bclaim, install, JOB_CORE_FORMS};
    use crate::shape::Form;

    /// The job-core forms, then `EMQ.BCLAIM`'s and `EMQ.INSTALL`'s: the order of [`COMMANDS`]
    /// but `EMQ.VERSION`.
    fn forms() -> Vec<Form> {
        JOB_CORE_FORMS
            .into_iter()
            .chain([bclaim::FORM, install::FORM])
            .collect()
    }

    #[test]
    fn every_verb_is_registered_once_with_its_form() {
        let names: Vec<String> = COMMANDS
            .iter()
            .map(|c| c.name.to_str().unwrap().to_owned())
            .collect();
        let mut expected: Vec<String> = forms()
            .iter()
            .map(|form| format!("emq.{}", form.verb.to_lowercase()))
            .collect();
        expected.push("emq.version".to_owned());
        assert_eq!(names, expected);
        for (command, form) in COMMANDS.iter().zip(forms()) {
            let positions: Vec<i32> = command.keys.iter().map(|key| key.pos).collect();
            let declared: Vec<i32> = (2..2 + form.keys.len() as i32).collect();
            assert_eq!(positions, declared, "{}", form.verb);
            assert_eq!(command.arity, -1, "{}", form.verb);
        }
        assert!(COMMANDS[COMMANDS.len() - 1].keys.is_empty());
    }

    /// The registration as module 0.2.0 made it by hand: name, flags and last key position
    /// (first key 2, step 1), from the dump of its table — for each command it had (the verbs
    /// added since are checked by the other tests).
    #[test]
    fn flags_and_key_range_equal_the_handwritten_table() {
        let before = include_str!("../tests/forms-0.2.0.txt");
        let rows: Vec<&str> = before.lines().filter(|l| l.starts_with("\"emq.")).collect();
        let now: Vec<String> = COMMANDS
            .iter()
            .filter(|c| c.name != c"emq.version")
            .filter(|c| {
                rows.iter()
                    .any(|r| r.starts_with(&format!("{:?} ", c.name.to_str().unwrap())))
            })
            .map(|c| {
                let last = c.keys.iter().map(|key| key.pos).max().unwrap();
                format!(
                    "{:?} {:?} {last}",
                    c.name.to_str().unwrap(),
                    c.flags.to_str().unwrap()
                )
            })
            .collect();
        let mut rows: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        // 0.2.0 registered INSTALL first; the table now follows the protocol order.
        rows.rotate_left(1);
        assert_eq!(now, rows);
    }

    #[test]
    fn flags_follow_the_class() {
        for (command, form) in COMMANDS.iter().zip(forms()) {
            let want = match (form.class, form.verb) {
                (Class::Drain, "BCLAIM") => c"write blocking",
                (Class::Admission, _) => c"write deny-oom",
                (Class::Drain, _) => c"write",
                (Class::Read, _) => c"readonly fast",
            };
            assert_eq!(command.flags, want, "{}", form.verb);
        }
        assert_eq!(COMMANDS[COMMANDS.len() - 1].flags, c"readonly fast");
    }

    #[test]
    fn the_anchor_is_a_real_key() {
        use valkey_module::commands::KeySpecFlags;
        for (command, form) in COMMANDS.iter().zip(forms()) {
            let anchor = &command.keys[form.anchor].flags;
            assert!(!anchor.contains(KeySpecFlags::NOT_KEY), "{}", form.verb);
        }
    }

    #[test]
    fn version_number_matches_the_crate() {
        let parts: Vec<i32> = verbs::version::MODULE_VERSION
            .split('.')
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(
            MODULE_VERSION_NUMBER,
            parts[0] * 10000 + parts[1] * 100 + parts[2]
        );
    }
}

//! EchoMQ's native Valkey module (wire 6): each job-core transition as one `EMQ.<VERB>` command,
//! with the same keys and values as its Lua script twin.
//!
//! This file only registers commands. The protocol is `docs/protocol.md`.

pub mod clock;
pub mod errors;
pub mod fence;
pub mod guard;
pub mod keyspace;
pub mod shape;
pub mod store;
pub mod verbs;

use valkey_module::{valkey_module, Context, Status, ValkeyResult, ValkeyString};

use crate::errors::answer;
use crate::verbs::{install, jobs, version};

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

/// `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` → `1` enqueued, `0` duplicate id
fn emq_enqueue(ctx: &Context, args: Vec<ValkeyString>) -> ValkeyResult {
    answer(ctx, jobs::enqueue(ctx, &args))
}

/// `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>` → `[]` or `[id, payload, attempts, deadline]`
fn emq_claim(ctx: &Context, args: Vec<ValkeyString>) -> ValkeyResult {
    answer(ctx, jobs::claim(ctx, &args))
}

/// Refuses to load on a server older than Valkey 8.
fn init(ctx: &Context, _args: &[ValkeyString]) -> Status {
    let info = ctx.server_info("server");
    let major = info
        .field("valkey_version")
        .and_then(|v| v.try_as_str().ok()?.split('.').next()?.parse::<u32>().ok());
    match major {
        Some(major) if major >= MIN_VALKEY_MAJOR => Status::Ok,
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
        ["emq.install", emq_install, "write deny-oom", 2, 2, 1],
        ["emq.enqueue", emq_enqueue, "write deny-oom", 2, 3, 1],
        ["emq.claim", emq_claim, "write deny-oom", 2, 4, 1],
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! Server time and server identity for leases.

use std::sync::OnceLock;
use valkey_module::Context;

use crate::direct;

/// The command's cached clock in ms: the value `TIME` reports inside the same command,
/// `MULTI/EXEC` or script (`seconds * 1000 + floor(microseconds / 1000)`).
pub fn now_ms() -> i64 {
    direct::cached_micros().div_euclid(1000)
}

/// The lease epoch: the server's `run_id` (from `INFO server`), read once per process.
pub fn run_id(ctx: &Context) -> &'static [u8] {
    static RUN_ID: OnceLock<Vec<u8>> = OnceLock::new();
    RUN_ID.get_or_init(|| {
        let info = ctx.server_info("server");
        info.field("run_id")
            .map(|id| id.as_slice().to_vec())
            .unwrap_or_default()
    })
}

//! `EMQ.VERSION` — what this module speaks.

use valkey_module::{Context, ValkeyValue};

use crate::direct::Args;
use crate::errors::{self, Reply, BRAND};
use crate::protocol::{EXTENSIONS, JOB_CORE};

/// The module's semantic version (major 0).
pub const MODULE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What this module does beyond the verbs, reported as `features`: `timers`, the server-side
/// promotion and reaping ([`crate::ticker`]); a host that reads it leaves its own housekeeping
/// loops off.
pub const FEATURES: &[&str] = &["timers"];

/// The features on now: `timers` while `echomq.timers` is on.
pub fn features() -> &'static [&'static str] {
    if crate::ticker::enabled() {
        FEATURES
    } else {
        &[]
    }
}

/// `EMQ.VERSION` → `["wire", <wire-6 brand>, "module", "<semver>", "verbs", [<token>…],
/// "extensions", [<token>…], "features", [<feature>…]]`: the job-core verbs, the verbs beside
/// them (`BCLAIM`), then what the module does beyond its verbs.
pub fn version(_ctx: &Context, args: Args) -> Reply {
    if args.len() != 1 {
        return Err(errors::arity("emq.version"));
    }
    Ok(reply())
}

/// The reply, built from the constants.
pub fn reply() -> ValkeyValue {
    let text = |s: &str| ValkeyValue::BulkString(s.to_owned());
    ValkeyValue::Array(vec![
        text("wire"),
        text(BRAND),
        text("module"),
        text(MODULE_VERSION),
        text("verbs"),
        ValkeyValue::Array(JOB_CORE.iter().map(|verb| text(verb)).collect()),
        text("extensions"),
        ValkeyValue::Array(EXTENSIONS.iter().map(|verb| text(verb)).collect()),
        text("features"),
        ValkeyValue::Array(features().iter().map(|feature| text(feature)).collect()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_zero() {
        assert!(MODULE_VERSION.starts_with("0."));
    }

    #[test]
    fn reply_shape() {
        let text = |s: &str| ValkeyValue::BulkString(s.to_owned());
        // The job core and the brand as the data states them (`protocol.json`).
        let verbs = ValkeyValue::Array(JOB_CORE.iter().map(|t| text(t)).collect());
        let want = vec![
            text("wire"),
            text(crate::protocol::WIRE6),
            text("module"),
            text("0.5.0"),
            text("verbs"),
            verbs,
            text("extensions"),
            ValkeyValue::Array(vec![text("BCLAIM")]),
            text("features"),
            ValkeyValue::Array(vec![text("timers")]),
        ];
        assert_eq!(reply(), ValkeyValue::Array(want));
    }
}

//! The timers' switch: the module config `echomq.timers` and the module's arguments
//! (`--loadmodule <path> timers yes|no`).

use std::sync::atomic::{AtomicBool, Ordering};

use valkey_module::configuration::{register_bool_configuration, ConfigurationFlags};
use valkey_module::Context;

use crate::direct;

/// The module config `echomq.timers`: whether the timers tick on this node.
pub static ENABLED: AtomicBool = AtomicBool::new(true);

/// Module load: registers the config `echomq.timers` (bool, default `yes`) and loads its value
/// from the server's config; then the module's arguments (`--loadmodule <path> timers yes|no`)
/// set it (an argument wins over the config file). Any other argument is refused.
pub fn configure(ctx: &Context, args: &[&[u8]]) -> Result<(), String> {
    let flags = ConfigurationFlags::DEFAULT;
    register_bool_configuration(ctx, "timers", &ENABLED, true, flags, None, None);
    if !direct::load_configs(ctx) {
        return Err("echomq: the server refused the module's config echomq.timers".to_owned());
    }
    arguments(args)
}

/// The module's arguments: `timers yes|no`, or none.
fn arguments(args: &[&[u8]]) -> Result<(), String> {
    match args {
        [] => Ok(()),
        [b"timers", value] if matches!(*value, b"yes" | b"no") => {
            ENABLED.store(*value == b"yes", Ordering::Relaxed);
            Ok(())
        }
        _ => Err(format!(
            "echomq: module arguments {:?} not understood (known: timers yes|no)",
            args.iter()
                .map(|a| String::from_utf8_lossy(a))
                .collect::<Vec<_>>()
        )),
    }
}

/// Whether the timers are switched on (`echomq.timers`).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_arguments() {
        assert_eq!(arguments(&[]), Ok(()));
        assert!(arguments(&[b"timers", b"maybe"]).is_err());
        assert!(arguments(&[b"timer", b"no"]).is_err());
        assert!(arguments(&[b"timers"]).is_err());
        assert_eq!(arguments(&[b"timers", b"no"]), Ok(()));
        assert!(!enabled());
        assert_eq!(arguments(&[b"timers", b"yes"]), Ok(()));
        assert!(enabled());
    }
}

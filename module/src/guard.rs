//! The write guard: refuse, with the server's own text, when this node cannot take writes.

use valkey_module::{Context, ContextFlags};

use crate::errors::{self, Refusal};

/// Refuses on a replica (read-only or not) and over `maxmemory`.
pub fn writable(ctx: &Context) -> Result<(), Refusal> {
    refusal(ctx.get_flags()).map_or(Ok(()), Err)
}

/// The refusal for a node in state `flags`, if any.
pub fn refusal(flags: ContextFlags) -> Option<Refusal> {
    if flags.intersects(ContextFlags::SLAVE | ContextFlags::READONLY) {
        Some(errors::readonly())
    } else if flags.contains(ContextFlags::OOM) {
        Some(errors::oom())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_to_refusals() {
        assert_eq!(refusal(ContextFlags::MASTER), None);
        assert_eq!(refusal(ContextFlags::MASTER | ContextFlags::MULTI), None);
        assert_eq!(refusal(ContextFlags::SLAVE), Some(errors::readonly()));
        assert_eq!(
            refusal(ContextFlags::SLAVE | ContextFlags::READONLY),
            Some(errors::readonly())
        );
        assert_eq!(
            refusal(ContextFlags::MASTER | ContextFlags::OOM),
            Some(errors::oom())
        );
        assert_eq!(
            refusal(ContextFlags::SLAVE | ContextFlags::OOM),
            Some(errors::readonly())
        );
    }
}

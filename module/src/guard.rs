//! The write guard: refuse, with the server's own text, when this node cannot take a verb's
//! writes. A full node drains: only admissions are refused over `maxmemory`.

use valkey_module::{Context, ContextFlags};

use crate::errors::{self, Refusal};

/// What a verb is to a node over `maxmemory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Takes new work in (`ENQUEUE`, `ADD`, `RETRY`; and `EMQ.INSTALL`): registered
    /// `write deny-oom`, so the server refuses it over `maxmemory` before it runs, as it refuses
    /// the admission scripts (`#!lua`).
    Admission,
    /// Drains work or controls a queue (every other verb): registered `write` only, it runs and
    /// writes over `maxmemory`, as the drain scripts do (`#!lua flags=allow-oom`).
    Drain,
    /// Reads only (`EMQ.VERSION`): registered `readonly fast`; no write guard.
    Read,
}

/// Refuses on a replica (read-only or not) for every verb, and over `maxmemory` for admissions.
pub fn writable(ctx: &Context, class: Class) -> Result<(), Refusal> {
    refusal(ctx.get_flags(), class).map_or(Ok(()), Err)
}

/// The refusal for a verb of `class` on a node in state `flags`, if any.
pub fn refusal(flags: ContextFlags, class: Class) -> Option<Refusal> {
    if class == Class::Read {
        None
    } else if flags.intersects(ContextFlags::SLAVE | ContextFlags::READONLY) {
        Some(errors::readonly())
    } else if class == Class::Admission && flags.contains(ContextFlags::OOM) {
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
        for class in [Class::Admission, Class::Drain] {
            assert_eq!(refusal(ContextFlags::MASTER, class), None);
            assert_eq!(
                refusal(ContextFlags::MASTER | ContextFlags::MULTI, class),
                None
            );
            assert_eq!(
                refusal(ContextFlags::SLAVE, class),
                Some(errors::readonly())
            );
            assert_eq!(
                refusal(ContextFlags::SLAVE | ContextFlags::READONLY, class),
                Some(errors::readonly())
            );
            assert_eq!(
                refusal(ContextFlags::SLAVE | ContextFlags::OOM, class),
                Some(errors::readonly())
            );
        }
        assert_eq!(
            refusal(ContextFlags::MASTER | ContextFlags::OOM, Class::Admission),
            Some(errors::oom())
        );
        assert_eq!(
            refusal(ContextFlags::MASTER | ContextFlags::OOM, Class::Drain),
            None
        );
        assert_eq!(
            refusal(ContextFlags::SLAVE | ContextFlags::OOM, Class::Read),
            None
        );
    }
}

//! The native fence, and `EMQ.INSTALL`'s logic. On a single node one key, the brand key, holds
//! the node's brand; on a cluster node the node's role is its configuration (`docs/cluster.md`).

use valkey_module::{Context, ContextFlags};

use crate::direct;
use crate::errors::{self, Refusal, BRAND};
use crate::guard;
use crate::keyspace::VERSION_KEY;
use crate::store;

/// What the fence reads to know this node's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A cluster node: its configuration. The module is loaded, so the node serves wire 6; the
    /// fence passes and reads nothing from the keyspace (the brand key lives on the shard
    /// that owns its slot, not necessarily this one).
    Configuration,
    /// A single node: the brand key (`VERSION_KEY`).
    Brand,
}

/// Where a node in state `flags` keeps its role: its configuration in cluster mode, else the
/// brand key.
pub fn source(flags: ContextFlags) -> Source {
    if flags.contains(ContextFlags::CLUSTER) {
        Source::Configuration
    } else {
        Source::Brand
    }
}

/// The fence every job-core verb runs after layout. On a cluster node it passes (the node's
/// role is its configuration). On a single node: the brand key read as a `GET` by the calling
/// client would read it (its ACL applies); the wire-6 brand passes; absent or any other string
/// is `EMQWIRE …`. An ACL denial is the server's `NOPERM …`, a non-string value its
/// `WRONGTYPE …`.
pub fn check(ctx: &Context) -> Result<(), Refusal> {
    match source(ctx.get_flags()) {
        Source::Configuration => Ok(()),
        Source::Brand => direct::get_as_caller(ctx, VERSION_KEY, passes)?,
    }
}

/// The fence as the module's own timers run it before they touch a queue: the same rule, the
/// brand read by the module itself (no client, no ACL).
pub fn check_node(ctx: &Context) -> Result<(), Refusal> {
    match source(ctx.get_flags()) {
        Source::Configuration => Ok(()),
        Source::Brand => direct::get_as_module(ctx, VERSION_KEY, passes)?,
    }
}

/// Whether a read brand passes the fence.
pub fn passes(brand: Option<&[u8]>) -> Result<(), Refusal> {
    match brand {
        Some(b) if b == BRAND.as_bytes() => Ok(()),
        other => Err(errors::emqwire(other)),
    }
}

/// `EMQ.INSTALL`: absent → write the brand, `1`; already the brand → `0`; another string →
/// `EMQWIRE …`; not a string → the server's `WRONGTYPE …`. Runs no fence.
pub fn install(ctx: &Context) -> Result<i64, Refusal> {
    match store::bytes(&store::read(ctx, "GET", &[VERSION_KEY])?) {
        None => {
            guard::writable(ctx, guard::Class::Admission)?;
            store::write(ctx, "SET", &[VERSION_KEY, BRAND.as_bytes()])?;
            Ok(1)
        }
        Some(found) => passes(Some(&found)).map(|()| 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_node_is_fenced_by_its_configuration() {
        let of = |bits| ContextFlags::from_bits_truncate(bits);
        for role in [ContextFlags::MASTER.bits(), ContextFlags::SLAVE.bits()] {
            for more in [
                0,
                ContextFlags::MULTI.bits(),
                ContextFlags::OOM.bits(),
                ContextFlags::LUA.bits() | ContextFlags::READONLY.bits(),
            ] {
                let bits = role | more;
                assert_eq!(source(of(bits)), Source::Brand, "flags {bits:#x}");
                let cluster = bits | ContextFlags::CLUSTER.bits();
                assert_eq!(
                    source(of(cluster)),
                    Source::Configuration,
                    "flags {cluster:#x}"
                );
            }
        }
    }

    #[test]
    fn only_the_module_brand_passes() {
        // The brands as the data states them (`protocol.json` `brands`).
        let (module, scripts) = (
            crate::protocol::WIRE6.as_bytes(),
            crate::protocol::WIRE4.as_bytes(),
        );
        assert_eq!(passes(Some(module)), Ok(()));
        assert_eq!(passes(None), Err(errors::emqwire(None)));
        assert_eq!(passes(Some(scripts)), Err(errors::emqwire(Some(scripts))));
        assert_eq!(passes(Some(b"")), Err(errors::emqwire(Some(b""))));
        let spaced = [module, b" "].concat();
        assert_eq!(passes(Some(&spaced)), Err(errors::emqwire(Some(&spaced))));
    }
}

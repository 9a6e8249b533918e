//! The native fence, and `EMQ.INSTALL`'s logic: one key, `{emq}:version`, holds the node's brand.

use valkey_module::Context;

use crate::direct;
use crate::errors::{self, Refusal, BRAND};
use crate::guard;
use crate::keyspace::VERSION_KEY;
use crate::store;

/// The fence every job-core verb runs after layout: `{emq}:version` read as a `GET` by the
/// calling client would read it (its ACL applies). `echomq:6.0.0` passes; absent or any other
/// string is `EMQWIRE …`. An ACL denial is the server's `NOPERM …`, a non-string value its
/// `WRONGTYPE …`.
pub fn check(ctx: &Context) -> Result<(), Refusal> {
    direct::get_as_caller(ctx, VERSION_KEY, passes)?
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
    fn only_the_module_brand_passes() {
        assert_eq!(passes(Some(b"echomq:6.0.0")), Ok(()));
        assert_eq!(passes(None), Err(errors::emqwire(None)));
        assert_eq!(
            passes(Some(b"echomq:4.0.0")),
            Err(errors::emqwire(Some(b"echomq:4.0.0")))
        );
        assert_eq!(passes(Some(b"")), Err(errors::emqwire(Some(b""))));
        assert_eq!(
            passes(Some(b"echomq:6.0.0 ")),
            Err(errors::emqwire(Some(b"echomq:6.0.0 ")))
        );
    }
}

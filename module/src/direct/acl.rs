//! The read the native fence makes: a key read as the calling client's `GET` would read it —
//! the caller's ACL first, then the value through the key API (no inner command, no reply built).

use valkey_module::{raw, Context};

use super::ffi;
use super::key::Kind;
use super::strings::Str;
use crate::errors::{self, Refusal};

/// `GET <key>` as the calling client would run it, through the key API: the caller's ACL must
/// allow reading `key` (a denial is logged in `ACL LOG` and answered with the server's
/// `NOPERM …` text), and a value that is not a string is the server's `WRONGTYPE …`. A string →
/// `read(Some(bytes))`; absent → `read(None)`. A context with no client (none of the verbs runs
/// there) has no user to check.
pub fn get_as_caller<R>(
    ctx: &Context,
    key: &[u8],
    read: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R, Refusal> {
    let name = Str::of(ctx.ctx, key);
    if !ffi::caller_may(ctx.ctx, name.ptr, raw::REDISMODULE_CMD_KEY_ACCESS) {
        return Err(errors::noperm_key());
    }
    get_string(ctx, &name, read)
}

/// `GET <key>` as the module itself reads it (no client's ACL: the module's own timers, which
/// no client called).
pub fn get_as_module<R>(
    ctx: &Context,
    key: &[u8],
    read: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R, Refusal> {
    get_string(ctx, &Str::of(ctx.ctx, key), read)
}

fn get_string<R>(
    ctx: &Context,
    name: &Str,
    read: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R, Refusal> {
    let k = ffi::open_key(ctx.ctx, name.ptr, false);
    let kind = Kind::of(k);
    let answer = value(kind, || ffi::string_value(k)).map(read);
    ffi::close_key(k);
    answer
}

/// What a `GET` of a key of type `kind` reads: nothing (absent), the string's bytes (`bytes`,
/// asked only for a string), or the server's `WRONGTYPE …`.
fn value<'a>(kind: Kind, bytes: impl FnOnce() -> &'a [u8]) -> Result<Option<&'a [u8]>, Refusal> {
    match kind {
        Kind::None => Ok(None),
        Kind::String => Ok(Some(bytes())),
        _ => Err(errors::wrongtype()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_reads_a_string_or_nothing() {
        assert_eq!(value(Kind::None, || unreachable!()), Ok(None));
        assert_eq!(
            value(Kind::String, || b"a brand"),
            Ok(Some(&b"a brand"[..]))
        );
        assert_eq!(value(Kind::String, || b""), Ok(Some(&b""[..])));
        for kind in [Kind::Hash, Kind::SortedSet, Kind::Other] {
            assert_eq!(
                value(kind, || unreachable!()),
                Err(errors::wrongtype()),
                "{kind:?}"
            );
        }
    }
}

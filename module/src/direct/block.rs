//! Waiting inside the server: a command whose client waits on one of its keys until the command
//! can answer ([`wait_on`], over `RedisModule_BlockClientOnKeys`), and the signal that wakes it
//! ([`super::Db::signal_ready`], over `RedisModule_SignalKeyAsReady`).
//!
//! A waiting client is woken after any command that signalled its key (or created it: the
//! server signals a key it adds), and only while the key exists. Each wake runs the command's
//! [`Wait::RETRY`] with the command's own arguments, in the client's context (its user, its
//! database): it answers, and the client stops waiting, or it keeps the client waiting. Its
//! writes reach the AOF and the replicas as the plain commands they replicate, after the wake.
//! At the timeout the client gets nil. The server ends a wait itself on a node that turns
//! replica (`UNBLOCKED …`, then it closes the connection) and, on a cluster, when the key's slot
//! is served elsewhere (`MOVED …`) or the cluster is down (`CLUSTERDOWN …`).

use std::ffi::c_int;

use valkey_module::{raw, Context, ContextFlags, ValkeyValue};

use super::ffi::{self, RCtx, RString};
use super::reply;
use super::scope::Args;
use crate::errors::Refusal;

/// What a waiting command does when its key is signalled ready: `Some(answer)` answers the
/// client (it stops waiting), `None` keeps it waiting.
pub type Retry = fn(&Context, Args) -> Option<Result<ValkeyValue, Refusal>>;

/// A command that may wait, as a type (one per command, so that each gets its own callback).
pub trait Wait {
    const RETRY: Retry;
}

/// Whether a client in a context with `flags` may wait: not inside `MULTI` or a script (the
/// server refuses to block there; such a caller gets the command's answer at once).
pub fn may_wait_with(flags: ContextFlags) -> bool {
    !flags.intersects(ContextFlags::DENY_BLOCKING | ContextFlags::MULTI | ContextFlags::LUA)
}

/// Whether the calling client may wait ([`may_wait_with`] its context's flags).
pub fn may_wait(ctx: &Context) -> bool {
    may_wait_with(ctx.get_flags())
}

/// The calling client waits on argument `key_at` of `args` (a key of the command, index in the
/// whole argument list) for at most `timeout_ms` (> 0): [`Wait::RETRY`] runs each time the key
/// is signalled ready; nil answers at the timeout. The command itself answers nothing more.
/// Only where [`may_wait`].
pub fn wait_on<W: Wait>(ctx: &Context, args: Args, key_at: usize, timeout_ms: i64) {
    debug_assert!(may_wait(ctx) && timeout_ms > 0);
    ffi::block_on_keys(
        ctx.ctx,
        (ready::<W>, timed_out),
        timeout_ms,
        &[args.string(key_at)],
    );
}

/// The status a reply callback returns: OK answered (the client stops waiting), ERR not.
fn status(answered: bool) -> c_int {
    if answered {
        raw::Status::Ok as c_int
    } else {
        raw::Status::Err as c_int
    }
}

/// The reply callback: the command's key was signalled ready.
extern "C" fn ready<W: Wait>(ctx: *mut RCtx, argv: *mut *mut RString, argc: c_int) -> c_int {
    let ctx = Context::new(ctx);
    let answer = (W::RETRY)(&ctx, Args::new(argv, argc));
    let answered = answer.is_some();
    if let Some(answer) = answer {
        reply::answer(&ctx, answer);
    }
    status(answered)
}

/// The timeout callback: nil.
extern "C" fn timed_out(ctx: *mut RCtx, _argv: *mut *mut RString, _argc: c_int) -> c_int {
    reply::answer(&Context::new(ctx), Ok(ValkeyValue::Null));
    status(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_wait_inside_multi_or_a_script() {
        assert!(may_wait_with(ContextFlags::MASTER));
        assert!(may_wait_with(ContextFlags::empty()));
        for denied in [
            ContextFlags::MULTI,
            ContextFlags::LUA,
            ContextFlags::DENY_BLOCKING,
            ContextFlags::MASTER | ContextFlags::MULTI | ContextFlags::DENY_BLOCKING,
        ] {
            let bits = denied.bits();
            assert!(!may_wait_with(denied), "{bits:#x}");
        }
    }

    #[test]
    fn an_answer_ends_the_wait_and_none_keeps_it() {
        assert_eq!(status(true), raw::REDISMODULE_OK as c_int);
        assert_eq!(status(false), raw::REDISMODULE_ERR as c_int);
    }
}

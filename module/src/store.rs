//! Inner command calls (`RedisModule_Call`) for `EMQ.INSTALL`. The job-core verbs read and write
//! through the key API, and the native fence reads the brand with one raw call
//! ([`crate::direct`]).
//!
//! Writes carry the `!` flag, so the AOF and replicas receive the plain command and never an
//! `EMQ.*` record. Reads carry `W` (they cannot write). Every call carries `E`, so a server error
//! comes back as its own text and is passed through.

use std::sync::OnceLock;
use valkey_module::{CallOptions, CallOptionsBuilder, CallReply, CallResult, Context};

use crate::errors::Refusal;

/// A reply from an inner call that succeeded.
pub type Answer = CallReply<'static>;

fn options(
    slot: &'static OnceLock<CallOptions>,
    build: fn() -> CallOptionsBuilder,
) -> &'static CallOptions {
    slot.get_or_init(|| build().errors_as_replies().build())
}

fn run(
    ctx: &Context,
    opts: &CallOptions,
    command: &str,
    args: &[&[u8]],
) -> Result<Answer, Refusal> {
    let result: CallResult<'static> = ctx.call_ext(command, opts, args);
    result.map_err(|e| Refusal::passthrough(e.as_bytes()))
}

/// A read on behalf of the module (the verb's own ACL check covered its declared keys).
pub fn read(ctx: &Context, command: &str, args: &[&[u8]]) -> Result<Answer, Refusal> {
    static OPTS: OnceLock<CallOptions> = OnceLock::new();
    run(
        ctx,
        options(&OPTS, || CallOptionsBuilder::new().no_writes()),
        command,
        args,
    )
}

/// A write, replicated as the plain command.
pub fn write(ctx: &Context, command: &str, args: &[&[u8]]) -> Result<Answer, Refusal> {
    static OPTS: OnceLock<CallOptions> = OnceLock::new();
    run(
        ctx,
        options(&OPTS, || CallOptionsBuilder::new().replicate()),
        command,
        args,
    )
}

/// The bytes of a string reply; `None` for a null reply (or any other shape).
pub fn bytes(answer: &Answer) -> Option<Vec<u8>> {
    match answer {
        CallReply::String(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    }
}

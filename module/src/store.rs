//! Inner calls into the keyspace: every read and write a verb makes goes through here.
//!
//! Writes carry the `!` flag, so the AOF and replicas receive the plain commands (`HSET`,
//! `ZADD`, …) and never an `EMQ.*` record. Reads carry `W` (they cannot write). Every call
//! carries `E`, so a server error comes back as its own text and is passed through.

use std::sync::OnceLock;
use valkey_module::{CallOptions, CallOptionsBuilder, CallReply, CallResult, Context};

use crate::errors::Refusal;

/// A reply from an inner call that succeeded.
pub type Answer = CallReply<'static>;

/// A key's type as `TYPE` names it, reduced to what the gates ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    None,
    String,
    Hash,
    SortedSet,
    Other,
}

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

/// A read as the calling client: its ACL applies, a denial comes back as `NOPERM …`.
pub fn read_as_caller(ctx: &Context, command: &str, args: &[&[u8]]) -> Result<Answer, Refusal> {
    static OPTS: OnceLock<CallOptions> = OnceLock::new();
    run(
        ctx,
        options(&OPTS, || CallOptionsBuilder::new().no_writes().verify_acl()),
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

/// The integer of an integer reply.
pub fn integer(answer: &Answer) -> Option<i64> {
    match answer {
        CallReply::I64(n) => Some(n.to_i64()),
        _ => None,
    }
}

/// The bytes of a string reply; `None` for a null reply (or any other shape).
pub fn bytes(answer: &Answer) -> Option<Vec<u8>> {
    match answer {
        CallReply::String(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    }
}

/// The elements of an array reply, each as optional bytes (`None` for a null element).
pub fn elements(answer: &Answer) -> Vec<Option<Vec<u8>>> {
    match answer {
        CallReply::Array(items) => items
            .iter()
            .map(|item| match item {
                Ok(CallReply::String(s)) => Some(s.as_bytes().to_vec()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `TYPE <key>`, reduced to [`Kind`].
pub fn kind(ctx: &Context, key: &[u8]) -> Result<Kind, Refusal> {
    let answer = read(ctx, "TYPE", &[key])?;
    Ok(match bytes(&answer).as_deref() {
        Some(b"none") => Kind::None,
        Some(b"string") => Kind::String,
        Some(b"hash") => Kind::Hash,
        Some(b"zset") => Kind::SortedSet,
        _ => Kind::Other,
    })
}

/// `EXISTS <key>` (any type).
pub fn exists(ctx: &Context, key: &[u8]) -> Result<bool, Refusal> {
    Ok(integer(&read(ctx, "EXISTS", &[key])?) == Some(1))
}

//! Registration of the module's own commands: one `extern "C"` handler per entry of
//! `crate::COMMANDS`, and the replies the verbs send.

use std::ffi::{c_char, c_int, CStr};

use valkey_module::{raw, Context, ValkeyValue};

use super::{reply_error, Args, RCtx, RString};
use crate::errors::Refusal;

/// A verb as a command runs it: the reply, or one refusal.
pub type Verb = fn(&Context, Args) -> Result<ValkeyValue, Refusal>;

/// One command this module registers itself (every one but `EMQ.VERSION`): its name, its verb,
/// its flags and its last key position (the first is argv 2, the step 1).
pub struct Command {
    pub name: &'static CStr,
    pub verb: Verb,
    pub flags: &'static CStr,
    pub last_key: c_int,
}

/// A command handler as the server calls it.
type Handler = extern "C" fn(*mut RCtx, *mut *mut RString, c_int) -> c_int;

/// The handler of `crate::COMMANDS[I]`.
extern "C" fn handler<const I: usize>(
    ctx: *mut RCtx,
    argv: *mut *mut RString,
    argc: c_int,
) -> c_int {
    let strings: &[*mut RString] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        // SAFETY: the server calls a handler with `argc` live argument strings that outlive
        // the call.
        unsafe { std::slice::from_raw_parts(argv, argc as usize) }
    };
    let ctx = Context::new(ctx);
    match (crate::COMMANDS[I].verb)(&ctx, Args { strings }) {
        Ok(value) => reply(&ctx, value),
        Err(refusal) => reply_error(&ctx, &refusal.wire_line()),
    }
    raw::Status::Ok as c_int
}

/// One handler per entry of `crate::COMMANDS`, in order.
const HANDLERS: [Handler; 15] = [
    handler::<0>,
    handler::<1>,
    handler::<2>,
    handler::<3>,
    handler::<4>,
    handler::<5>,
    handler::<6>,
    handler::<7>,
    handler::<8>,
    handler::<9>,
    handler::<10>,
    handler::<11>,
    handler::<12>,
    handler::<13>,
    handler::<14>,
];

/// Registers every command of `crate::COMMANDS` with its flags, as the crate registers its own
/// (`RedisModule_CreateCommand`, keys from argv `first_key` to the command's last, step 1).
pub fn register(ctx: &Context, first_key: c_int) -> bool {
    crate::COMMANDS
        .iter()
        .zip(HANDLERS)
        .all(|(command, handler)| {
            // SAFETY: called from the module's load hook with its live context; NUL-terminated
            // strings.
            let status = unsafe {
                raw::RedisModule_CreateCommand.unwrap()(
                    ctx.ctx,
                    command.name.as_ptr(),
                    Some(handler),
                    command.flags.as_ptr(),
                    first_key,
                    command.last_key,
                    1,
                )
            };
            status == raw::Status::Ok as c_int
        })
}

/// Sends one value (the shapes the verbs answer with; any other through the crate).
fn reply(ctx: &Context, value: ValkeyValue) {
    // SAFETY: the live command context; buffers are valid for the length given.
    unsafe {
        match value {
            ValkeyValue::Integer(n) => {
                raw::RedisModule_ReplyWithLongLong.unwrap()(ctx.ctx, n);
            }
            ValkeyValue::StringBuffer(bytes) => {
                raw::RedisModule_ReplyWithStringBuffer.unwrap()(
                    ctx.ctx,
                    bytes.as_ptr().cast::<c_char>(),
                    bytes.len(),
                );
            }
            ValkeyValue::Null => {
                raw::RedisModule_ReplyWithNull.unwrap()(ctx.ctx);
            }
            ValkeyValue::Array(items) => {
                raw::RedisModule_ReplyWithArray.unwrap()(ctx.ctx, items.len() as std::ffi::c_long);
                for item in items {
                    reply(ctx, item);
                }
            }
            ValkeyValue::NoReply => {}
            other => {
                ctx.reply(Ok(other));
            }
        }
    }
}

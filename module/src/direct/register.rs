//! Registration of the module's commands from a table (`crate::COMMANDS`, made from the
//! protocol data): each command is created with no legacy key positions (0, 0, 0), then given its
//! summary, arity and one key spec per declared key (`RedisModule_SetCommandInfo`), from which
//! the server derives the legacy first/last/step that cluster routing uses.
//!
//! Key specs declare every key a verb is *given*. The keys a verb *derives* on the server — a
//! row `<base>job:<id>` for an id it read (`CLAIM`, `PROMOTE`, `REAP`, retention) or was given
//! (`EXTEND` … `REQUEUE`), and `<base>meta` (`CLAIM`) — cannot be declared ahead: they are not in
//! the arguments. The layout step keeps them in the anchor's queue (same hashtag, same slot).

use std::ffi::{c_char, c_int, CStr};

use valkey_module::commands::{BeginSearch, FindKeys, KeySpec, KeySpecFlags};
use valkey_module::{raw, Context, ValkeyValue};

use super::{reply_error, Args, RCtx, RString};
use crate::errors::Refusal;

/// A verb as a command runs it: the reply, or one refusal.
pub type Verb = fn(&Context, Args) -> Result<ValkeyValue, Refusal>;

/// A command's verb as a type (one per command, made from the protocol data), so that each
/// command gets its own `extern "C"` handler, [`handler`].
pub trait Run {
    const VERB: Verb;
}

/// A command handler as the server calls it.
pub type Handler = unsafe extern "C" fn(*mut RCtx, *mut *mut RString, c_int) -> c_int;

/// One declared key: its argv position and its key-spec flags.
pub struct KeyArg {
    pub pos: i32,
    pub flags: KeySpecFlags,
}

/// One command this module registers.
pub struct Command {
    /// `emq.<verb>` (command names are case-insensitive).
    pub name: &'static CStr,
    pub handler: Handler,
    /// The command flags of the verb's class.
    pub flags: &'static CStr,
    pub summary: &'static CStr,
    /// `-1`: any count (the verb's shape step refuses a wrong one with its form).
    pub arity: i32,
    pub keys: &'static [KeyArg],
}

impl KeyArg {
    /// The key spec: one key at argv `pos` (begin search at that index, a range of one key).
    pub fn spec(&self) -> KeySpec {
        KeySpec::new(
            None,
            KeySpecFlags::from_bits_retain(self.flags.bits()),
            BeginSearch::new_index(self.pos),
            FindKeys::new_range(0, 1, 0),
        )
    }
}

/// The handler of the command whose verb is `R`.
///
/// # Safety
///
/// Called by the server only: `ctx` is the live command context and `argv` holds `argc` live
/// argument strings that outlive the call.
pub unsafe extern "C" fn handler<R: Run>(
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
    match (R::VERB)(&ctx, Args { strings }) {
        Ok(value) => reply(&ctx, value),
        Err(refusal) => reply_error(&ctx, &refusal.wire_line()),
    }
    raw::Status::Ok as c_int
}

/// The version of `RedisModuleCommandInfo` this module fills in.
static INFO_VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
    sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
};

/// Registers every command of `commands`; `false` (with the reason in the server's log) when
/// the server refuses one.
pub fn register(ctx: &Context, commands: &[Command]) -> bool {
    commands.iter().all(|command| {
        let done = create(ctx, command);
        if !done {
            ctx.log_warning(&format!(
                "echomq: could not register {}",
                command.name.to_string_lossy()
            ));
        }
        done
    })
}

/// `RedisModule_CreateCommand` (no legacy key positions), then `RedisModule_SetCommandInfo`.
fn create(ctx: &Context, command: &Command) -> bool {
    // The key specs as the server reads them: one per key, then a zeroed terminator.
    let mut specs: Vec<raw::RedisModuleCommandKeySpec> =
        command.keys.iter().map(|key| (&key.spec()).into()).collect();
    // SAFETY: an all-zero key spec is the array's terminator (`begin_search_type` 0).
    specs.push(unsafe { std::mem::zeroed() });
    // SAFETY: called from the module's load hook with its live context; NUL-terminated strings;
    // the info and its key specs are read (copied) by the server during the call.
    unsafe {
        let created = raw::RedisModule_CreateCommand.unwrap()(
            ctx.ctx,
            command.name.as_ptr(),
            Some(command.handler),
            command.flags.as_ptr(),
            0,
            0,
            0,
        );
        if created != raw::Status::Ok as c_int {
            return false;
        }
        let cmd = raw::RedisModule_GetCommand.unwrap()(ctx.ctx, command.name.as_ptr());
        if cmd.is_null() {
            return false;
        }
        let mut info = raw::RedisModuleCommandInfo {
            version: &INFO_VERSION,
            summary: command.summary.as_ptr(),
            complexity: std::ptr::null(),
            since: std::ptr::null(),
            history: std::ptr::null_mut(),
            tips: std::ptr::null(),
            arity: command.arity,
            key_specs: specs.as_mut_ptr(),
            args: std::ptr::null_mut(),
        };
        raw::RedisModule_SetCommandInfo.unwrap()(cmd, &mut info) == raw::Status::Ok as c_int
    }
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

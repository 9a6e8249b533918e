//! Registration of the module's commands from a table (`crate::COMMANDS`, made from the
//! protocol data): each command is created with no legacy key positions (0, 0, 0), then given its
//! summary, arity and one key spec per declared key (`RedisModule_SetCommandInfo`), from which
//! the server derives the legacy first/last/step that cluster routing uses.
//!
//! Key specs declare every key a verb is *given*. The keys a verb *derives* on the server — a
//! row `<base>job:<id>` for an id it read (`CLAIM`, `PROMOTE`, `REAP`, retention) or was given
//! (`EXTEND` … `REQUEUE`), and `<base>meta` (`CLAIM`) — cannot be declared ahead: they are not in
//! the arguments. The layout step keeps them in the anchor's queue (same hashtag, same slot), and
//! the base `emq:{q}:` is declared as a key (not NOT_KEY, which ACL skips) with the access the
//! verb makes to them, so ACL key rules on the queue's prefix reach them.

use std::ffi::{c_int, CStr};

use valkey_module::commands::{BeginSearch, FindKeys, KeySpec, KeySpecFlags};
use valkey_module::{raw, Context, ValkeyValue};

use super::ffi::{self, RCtx, RString};
use super::reply;
use super::scope::Args;
use crate::errors::Refusal;

/// A verb as a command runs it: the reply, or one refusal.
pub type Verb = fn(&Context, Args) -> Result<ValkeyValue, Refusal>;

/// A command's verb as a type (one per command, made from the protocol data), so that each
/// command gets its own `extern "C"` handler, [`handler`].
pub trait Run {
    const VERB: Verb;
}

/// A command handler as the server calls it.
pub type Handler = extern "C" fn(*mut RCtx, *mut *mut RString, c_int) -> c_int;

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

/// The handler of the command whose verb is `R`: the server calls it with the command's live
/// context and its `argc` arguments.
pub extern "C" fn handler<R: Run>(ctx: *mut RCtx, argv: *mut *mut RString, argc: c_int) -> c_int {
    let ctx = Context::new(ctx);
    reply::answer(&ctx, (R::VERB)(&ctx, Args::new(argv, argc)));
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
    // The key specs as the server reads them: one per key, then the terminator.
    let mut specs: Vec<raw::RedisModuleCommandKeySpec> = command
        .keys
        .iter()
        .map(|key| (&key.spec()).into())
        .collect();
    specs.push(ffi::zeroed_key_spec());
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
    let handler: raw::RedisModuleCmdFunc = Some(command.handler);
    ffi::create_command(ctx.ctx, (command.name, command.flags), handler, &mut info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_spec_per_declared_key() {
        let key = KeyArg {
            pos: 4,
            flags: KeySpecFlags::READ_ONLY | KeySpecFlags::NOT_KEY,
        };
        let spec: raw::RedisModuleCommandKeySpec = (&key.spec()).into();
        assert!(spec.notes.is_null());
        assert_eq!(
            spec.flags,
            u64::from(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_NOT_KEY)
        );
        assert_eq!(ffi::index_range(&spec), Some((4, (0, 1, 0))));
    }

    #[test]
    fn the_terminator_ends_the_array() {
        let end = ffi::zeroed_key_spec();
        assert_eq!(end.begin_search_type, 0);
    }
}

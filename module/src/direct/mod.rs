//! Direct access to the keyspace through the module key API: the module's only `unsafe` code.
//!
//! A verb opens one [`Db`] over its own arguments and opens each key it touches once: keys it
//! only reads with [`Db::read`] (read-only), keys it also writes with [`Db::open`] (for writing
//! when the node takes writes). Reads return owned values; a key is closed when its [`Key`]
//! drops, and a key is never open twice at once. Each write ([`Key::zadd`], [`Key::zrem`],
//! [`Key::hset`], [`Key::hincrby`], [`Key::hdel`], [`Key::delete`], [`Db::publish`]) has exactly
//! the effects of its plain command:
//!
//! * the same change to the value (an emptied sorted set or hash is deleted, as the commands do);
//! * the same signals, only when the command would have sent them: `WATCH` invalidation and
//!   client-side-caching invalidation (`SignalModifiedKey`), then the command's keyspace
//!   notifications (`zadd`, `zrem`, `hset`, `hdel`, `del`), in the command's order;
//! * the plain command replicated (AOF and replicas) exactly when the command itself would have
//!   been propagated, i.e. when it changed something; the AOF and replicas never see `EMQ.*`.
//!
//! The module sets `NO_IMPLICIT_SIGNAL_MODIFIED` at load ([`init`]), so closing a key opened for
//! writing signals nothing by itself: a write that changes nothing invalidates no `WATCH`, as
//! with the plain command.
//!
//! Strings: a byte slice that is one of the verb's own arguments (same address and length) is
//! passed to the server as that argument's string object; bytes equal to a string interned at
//! load (field names, states, the run id) as that string; any other bytes become a new string,
//! freed when its [`Str`] drops.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::marker::PhantomData;
use std::ptr;
use std::sync::OnceLock;

use valkey_module::{raw, Context};

use crate::errors::{self, Refusal};

mod key;
mod register;

pub use key::Key;
pub use register::{handler, register, Command, Handler, KeyArg, Run, Verb};

type RString = raw::RedisModuleString;
type RKey = raw::RedisModuleKey;
type RCtx = raw::RedisModuleCtx;

/// `REDISMODULE_HASH_DELETE` (a sentinel pointer in `redismodule.h`).
const HASH_DELETE: *mut RString = ptr::without_provenance_mut(1);

/// The most arguments a verb takes (`EMQ.FAIL`: 13); more are never matched by address.
const MAX_ARGS: usize = 16;

/// A key's type, reduced to what the gates ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    None,
    String,
    Hash,
    SortedSet,
    Other,
}

/// What a `ZADD` of one member did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zadd {
    Added,
    Updated,
    Unchanged,
    /// The condition (`NX`/`XX`) held the write back: nothing changed.
    Skipped,
}

/// The condition of a `ZADD`: none, `NX` (only a new member), `XX` (only an existing member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    New,
    Existing,
}

/// A string object created at load and kept for the life of the process.
struct Interned {
    bytes: &'static [u8],
    ptr: *mut RString,
}

/// The longest interned string.
const MAX_INTERNED: usize = 64;

/// The interned strings, sorted by length; `by_len[n]` is the range of those of length `n`.
/// Every access is on the server's main thread.
struct Table {
    strings: Vec<Interned>,
    by_len: [(usize, usize); MAX_INTERNED + 1],
}

impl Table {
    fn get(&self, bytes: &[u8]) -> Option<*mut RString> {
        let &(start, end) = self.by_len.get(bytes.len())?;
        self.strings[start..end]
            .iter()
            .find(|s| s.bytes == bytes)
            .map(|s| s.ptr)
    }
}

// SAFETY: the table is written once at load and only read afterwards, always on the main
// thread (module commands run there); the string objects are never freed.
unsafe impl Send for Table {}
unsafe impl Sync for Table {}

static INTERNED: OnceLock<Table> = OnceLock::new();

/// Module load: closing a key opened for writing no longer signals it (every write signals
/// explicitly, exactly when its plain command would); `strings` (at most 64 bytes each) are
/// interned.
pub fn init(ctx: &Context, strings: &[&'static [u8]]) {
    // SAFETY: called from the module's load hook with its live context.
    unsafe {
        raw::RedisModule_SetModuleOptions.unwrap()(
            ctx.ctx,
            raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int,
        )
    };
    let mut strings: Vec<Interned> = strings
        .iter()
        .filter(|bytes| bytes.len() <= MAX_INTERNED)
        .map(|&bytes| Interned {
            bytes,
            // SAFETY: a NULL context creates a string outside automatic memory; it is never
            // freed.
            ptr: unsafe {
                raw::RedisModule_CreateString.unwrap()(
                    ptr::null_mut(),
                    bytes.as_ptr().cast::<c_char>(),
                    bytes.len(),
                )
            },
        })
        .collect();
    strings.sort_by_key(|s| s.bytes.len());
    let mut by_len = [(0, 0); MAX_INTERNED + 1];
    for (n, range) in by_len.iter_mut().enumerate() {
        let start = strings.partition_point(|s| s.bytes.len() < n);
        let end = strings.partition_point(|s| s.bytes.len() <= n);
        *range = (start, end);
    }
    let _ = INTERNED.set(Table { strings, by_len });
}

/// The command's cached clock in microseconds (the value `TIME` reports inside the same
/// command, `MULTI/EXEC` or script).
pub fn cached_micros() -> i64 {
    // SAFETY: the API is resolved at load time and takes no arguments.
    unsafe { raw::RedisModule_CachedMicroseconds.unwrap()() }
}

/// Sends one error reply; `line` is the whole line without the leading `-`.
pub fn reply_error(ctx: &Context, line: &CStr) {
    // SAFETY: `ctx.ctx` is the live command context; the line is NUL-terminated.
    unsafe { raw::RedisModule_ReplyWithError.unwrap()(ctx.ctx, line.as_ptr()) };
}

/// A string object for the server: borrowed (an argument, an interned string) or created here
/// and freed on drop.
struct Str {
    ctx: *mut RCtx,
    ptr: *mut RString,
    owned: bool,
}

impl Drop for Str {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: created by `RedisModule_CreateString` with this context, freed once.
            unsafe { raw::RedisModule_FreeString.unwrap()(self.ctx, self.ptr) };
        }
    }
}

/// `bytes` as a string object: an interned string, or a new string freed when the [`Str`] drops.
fn string(ctx: *mut RCtx, bytes: &[u8]) -> Str {
    if let Some(ptr) = INTERNED.get().and_then(|table| table.get(bytes)) {
        return Str {
            ctx,
            ptr,
            owned: false,
        };
    }
    // SAFETY: the pointer and length describe `bytes`; the server copies them.
    let ptr = unsafe {
        raw::RedisModule_CreateString.unwrap()(ctx, bytes.as_ptr().cast::<c_char>(), bytes.len())
    };
    Str {
        ctx,
        ptr,
        owned: true,
    }
}

/// `GET <key>` as the calling client would run it, through the key API: the caller's ACL must
/// allow reading `key` (a denial is logged in `ACL LOG` and answered with the server's
/// `NOPERM …` text), and a value that is not a string is the server's `WRONGTYPE …`. A string →
/// `read(Some(bytes))`; absent → `read(None)`. Unlike `RedisModule_Call`, this builds no command
/// and no reply: the fence runs in every verb.
pub fn get_as_caller<R>(
    ctx: &Context,
    key: &[u8],
    read: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R, Refusal> {
    let name = string(ctx.ctx, key);
    caller_may_read(ctx.ctx, &name)?;
    // SAFETY: live context and key name; the key is opened read-only, its bytes are read while
    // it is open, and it is closed once.
    unsafe {
        let k: *mut RKey =
            raw::RedisModule_OpenKey.unwrap()(ctx.ctx, name.ptr, raw::REDISMODULE_READ as c_int)
                .cast();
        let answer = match kind_of(k) {
            Kind::None => Ok(read(None)),
            Kind::String => {
                let mut len = 0usize;
                let p = raw::RedisModule_StringDMA.unwrap()(
                    k,
                    &mut len,
                    raw::REDISMODULE_READ as c_int,
                );
                let bytes = if p.is_null() || len == 0 {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(p.cast::<u8>(), len)
                };
                Ok(read(Some(bytes)))
            }
            _ => Err(errors::wrongtype()),
        };
        if !k.is_null() {
            raw::RedisModule_CloseKey.unwrap()(k);
        }
        answer
    }
}

/// Whether the calling client's user may read `key` (the check `GET` passes before it runs). A
/// denial is logged in `ACL LOG` and refused with the server's `NOPERM …` text. A context with no
/// client (none of the verbs runs there) has no user to check.
fn caller_may_read(ctx: *mut RCtx, key: &Str) -> Result<(), Refusal> {
    // SAFETY: live context and key name; the user name and the user are freed once each.
    unsafe {
        let user_name = raw::RedisModule_GetCurrentUserName.unwrap()(ctx);
        if user_name.is_null() {
            return Ok(());
        }
        let user = raw::RedisModule_GetModuleUserFromUserName.unwrap()(user_name);
        let allowed = user.is_null()
            || raw::RedisModule_ACLCheckKeyPermissions.unwrap()(
                user,
                key.ptr,
                raw::REDISMODULE_CMD_KEY_ACCESS as c_int,
            ) == raw::REDISMODULE_OK as c_int;
        if !user.is_null() {
            raw::RedisModule_FreeModuleUser.unwrap()(user);
        }
        let refusal = if allowed {
            Ok(())
        } else {
            raw::RedisModule_ACLAddLogEntryByUserName.unwrap()(
                ctx,
                user_name,
                key.ptr,
                raw::RedisModuleACLLogEntryReason_REDISMODULE_ACL_LOG_KEY,
            );
            Err(errors::noperm_key())
        };
        raw::RedisModule_FreeString.unwrap()(ctx, user_name);
        refusal
    }
}

/// The bytes of a string object, copied.
fn bytes_of(s: *const RString) -> Vec<u8> {
    let mut len = 0usize;
    // SAFETY: `s` is a live string object; the pointer and length describe its bytes.
    unsafe {
        let p = raw::RedisModule_StringPtrLen.unwrap()(s, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len).to_vec()
    }
}

/// The type of an open key (`NULL`: absent).
fn kind_of(key: *mut RKey) -> Kind {
    // SAFETY: `KeyType` accepts NULL (an absent key opened read-only).
    let t = unsafe { raw::RedisModule_KeyType.unwrap()(key) } as isize;
    match t {
        raw::REDISMODULE_KEYTYPE_EMPTY => Kind::None,
        raw::REDISMODULE_KEYTYPE_STRING => Kind::String,
        raw::REDISMODULE_KEYTYPE_HASH => Kind::Hash,
        raw::REDISMODULE_KEYTYPE_ZSET => Kind::SortedSet,
        _ => Kind::Other,
    }
}

/// A command's arguments as the server passes them (the command name first).
#[derive(Clone, Copy)]
pub struct Args<'a> {
    strings: &'a [*mut RString],
}

impl<'a> Args<'a> {
    /// How many arguments (the command name included).
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether there is no argument at all.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// The bytes of argument `i`.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        let mut len = 0usize;
        // SAFETY: a live argument string object; its bytes live as long as the command runs.
        unsafe {
            let p = raw::RedisModule_StringPtrLen.unwrap()(self.strings[i], &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
}

/// The most keys a verb holds open at once.
const MAX_OPEN: usize = 16;

/// One verb's access to the keyspace.
pub struct Db<'a> {
    ctx: *mut RCtx,
    /// The verb's arguments: address and length of their bytes, and their string objects.
    args: [(*const u8, usize, *mut RString); MAX_ARGS],
    nargs: usize,
    /// Whether [`Db::open`] opens keys for writing (the node takes writes).
    writable: bool,
    /// The names (bytes) of the keys open now: a key is never open twice at once.
    open: RefCell<([(*const u8, usize); MAX_OPEN], usize)>,
    _args: PhantomData<Args<'a>>,
}

impl<'a> Db<'a> {
    /// The keyspace as the verb called with `args` sees it; `writable`: whether this node takes
    /// writes now (the write guard would pass), so that the keys the verb writes are opened for
    /// writing from the start.
    pub fn new(ctx: &'a Context, args: Args<'a>, writable: bool) -> Self {
        let mut table = [(ptr::null(), 0, ptr::null_mut()); MAX_ARGS];
        let nargs = args.len().min(MAX_ARGS);
        for (i, slot) in table.iter_mut().enumerate().take(nargs) {
            let bytes = args.bytes(i);
            *slot = (bytes.as_ptr(), bytes.len(), args.strings[i]);
        }
        Db {
            ctx: ctx.ctx,
            args: table,
            nargs,
            writable,
            open: RefCell::new(([(ptr::null(), 0); MAX_OPEN], 0)),
            _args: PhantomData,
        }
    }

    /// `bytes` as a string object: an interned string, the argument it is, or a new string.
    fn string(&self, bytes: &[u8]) -> Str {
        if let Some(ptr) = INTERNED.get().and_then(|table| table.get(bytes)) {
            return Str {
                ctx: self.ctx,
                ptr,
                owned: false,
            };
        }
        for &(at, len, ptr) in &self.args[..self.nargs] {
            if at == bytes.as_ptr() && len == bytes.len() {
                return Str {
                    ctx: self.ctx,
                    ptr,
                    owned: false,
                };
            }
        }
        string(self.ctx, bytes)
    }

    /// Opens `key` read-only: a lookup like a read command's (it counts as a keyspace hit or
    /// miss, and expires a stale key). For keys the verb only reads.
    pub fn read(&self, key: &[u8]) -> Key<'_> {
        self.open_mode(key, false)
    }

    /// Opens `key` for the reads and writes of the verb: for writing when the node takes writes
    /// (a lookup like a write command's), else read-only (the write guard refuses before any
    /// write).
    pub fn open(&self, key: &[u8]) -> Key<'_> {
        self.open_mode(key, self.writable)
    }

    fn open_mode(&self, key: &[u8], write: bool) -> Key<'_> {
        {
            let mut open = self.open.borrow_mut();
            let (names, n) = &mut *open;
            // SAFETY: each entry describes the bytes of the name of a key open now (its string
            // object lives as long as the handle).
            let taken = names[..*n]
                .iter()
                .any(|&(at, len)| unsafe { std::slice::from_raw_parts(at, len) } == key);
            assert!(!taken, "a key open twice in one verb");
            assert!(*n < MAX_OPEN, "too many keys open in one verb");
        }
        let name = self.string(key);
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        // SAFETY: live context and key name; the server keeps its own reference to the name.
        let ptr = unsafe { raw::RedisModule_OpenKey.unwrap()(self.ctx, name.ptr, mode as c_int) };
        let bytes = name.bytes();
        let mut open = self.open.borrow_mut();
        let (names, n) = &mut *open;
        names[*n] = (bytes.as_ptr(), bytes.len());
        *n += 1;
        Key {
            db: self,
            name,
            ptr: ptr.cast(),
            write,
        }
    }

    /// Forgets `name` as open.
    fn closed(&self, name: *const u8) {
        let mut open = self.open.borrow_mut();
        let (names, n) = &mut *open;
        if let Some(i) = names[..*n].iter().position(|&(at, _)| at == name) {
            names[i] = names[*n - 1];
            *n -= 1;
        }
    }

    /// `WATCH` / client-side-caching invalidation of `key`, as the plain command signals it.
    fn signal(&self, key: &Str) {
        // SAFETY: live context and key name.
        unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(self.ctx, key.ptr) };
    }

    /// One keyspace notification, as the plain command fires it.
    fn notify(&self, class: c_int, event: &CStr, key: &Str) {
        // SAFETY: live context, NUL-terminated event name, live key name.
        unsafe {
            raw::RedisModule_NotifyKeyspaceEvent.unwrap()(self.ctx, class, event.as_ptr(), key.ptr)
        };
    }

    /// Replicates `command a b` to the AOF and the replicas (`aof` false: replicas only).
    fn replicate2(&self, command: &CStr, a: &Str, b: &Str, aof: bool) {
        let fmt: &CStr = if aof { c"ss" } else { c"ssA" };
        // SAFETY: `s` takes a live string object; the server takes its own references.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                self.ctx,
                command.as_ptr(),
                fmt.as_ptr(),
                a.ptr,
                b.ptr,
            )
        };
    }

    /// `DEL <key>` (any type) → whether it existed.
    pub fn del(&self, key: &[u8]) -> Result<bool, Refusal> {
        self.open(key).delete()
    }

    /// `PUBLISH <channel> <message>` as the command runs it: delivered to this node's
    /// subscribers (and across the cluster bus in cluster mode), and, outside cluster mode,
    /// replicated to the replicas only (not to the AOF).
    pub fn publish(&self, channel: &[u8], message: &[u8]) {
        let (channel, message) = (self.string(channel), self.string(message));
        // SAFETY: live context, channel and message.
        unsafe { raw::RedisModule_PublishMessage.unwrap()(self.ctx, channel.ptr, message.ptr) };
        // SAFETY: `ctx` is the live command context.
        let flags = unsafe { raw::RedisModule_GetContextFlags.unwrap()(self.ctx) };
        if flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER as c_int == 0 {
            self.replicate2(c"PUBLISH", &channel, &message, false);
        }
    }
}

impl Str {
    /// The bytes of the string object.
    fn bytes(&self) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: a live string object; its bytes live as long as it does.
        unsafe {
            let p = raw::RedisModule_StringPtrLen.unwrap()(self.ptr, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
}

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

use valkey_module::{raw, Context, ValkeyValue};

use crate::errors::{self, Refusal};

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

/// An open key; closed on drop. Reads take `&self`, writes `&mut self`; a key is open at most
/// once per verb, so no other handle sees a value a write replaces or deletes.
pub struct Key<'d> {
    db: &'d Db<'d>,
    name: Str,
    ptr: *mut RKey,
    write: bool,
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        // SAFETY: `CloseKey` accepts NULL; otherwise opened by `OpenKey`, closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.ptr) };
        self.db.closed(self.name.bytes().as_ptr());
    }
}

impl Key<'_> {
    /// `TYPE`, reduced to [`Kind`].
    pub fn kind(&self) -> Kind {
        kind_of(self.ptr)
    }

    /// Whether the key exists (any type).
    pub fn exists(&self) -> bool {
        self.kind() != Kind::None
    }

    /// A sorted set (`true`) or absent (`false`), else `WRONGTYPE`.
    fn sorted_set(&self) -> Result<bool, Refusal> {
        match self.kind() {
            Kind::SortedSet => Ok(true),
            Kind::None => Ok(false),
            _ => Err(errors::wrongtype()),
        }
    }

    /// A hash (`true`) or absent (`false`), else `WRONGTYPE`.
    fn hash(&self) -> Result<bool, Refusal> {
        match self.kind() {
            Kind::Hash => Ok(true),
            Kind::None => Ok(false),
            _ => Err(errors::wrongtype()),
        }
    }

    /// `ZCARD`.
    pub fn card(&self) -> Result<i64, Refusal> {
        if !self.sorted_set()? {
            return Ok(0);
        }
        // SAFETY: an open sorted-set key.
        Ok(unsafe { raw::RedisModule_ValueLength.unwrap()(self.ptr) } as i64)
    }

    /// `ZSCORE <member>`: `None` when not a member.
    pub fn score(&self, member: &[u8]) -> Result<Option<f64>, Refusal> {
        if !self.sorted_set()? {
            return Ok(None);
        }
        let elem = self.db.string(member);
        let mut score = 0f64;
        // SAFETY: an open sorted-set key and a live member string.
        let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(self.ptr, elem.ptr, &mut score) };
        Ok((found == raw::Status::Ok as c_int).then_some(score))
    }

    /// The members with `min ≤ score ≤ max` (`max` excluded when `max_excluded`), lowest score
    /// first (ties by member), at most `limit`: `ZRANGE <key> <min> <max> BYSCORE LIMIT 0 <limit>`.
    pub fn range(
        &self,
        min: f64,
        max: f64,
        max_excluded: bool,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, Refusal> {
        if !self.sorted_set()? || limit == 0 {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(limit.min(16));
        // SAFETY: an open sorted-set key; the iterator is stopped before returning, each
        // element string is freed after its bytes are copied.
        unsafe {
            let first = raw::RedisModule_ZsetFirstInScoreRange.unwrap()(
                self.ptr,
                min,
                max,
                0,
                c_int::from(max_excluded),
            );
            if first != raw::Status::Ok as c_int {
                return Ok(out);
            }
            while out.len() < limit && raw::RedisModule_ZsetRangeEndReached.unwrap()(self.ptr) == 0
            {
                let elem =
                    raw::RedisModule_ZsetRangeCurrentElement.unwrap()(self.ptr, ptr::null_mut());
                if elem.is_null() {
                    break;
                }
                out.push(bytes_of(elem));
                raw::RedisModule_FreeString.unwrap()(self.db.ctx, elem);
                if raw::RedisModule_ZsetRangeNext.unwrap()(self.ptr) == 0 {
                    break;
                }
            }
            raw::RedisModule_ZsetRangeStop.unwrap()(self.ptr);
        }
        Ok(out)
    }

    /// The first `n` members by rank: `ZRANGE <key> 0 <n - 1>`.
    pub fn first(&self, n: usize) -> Result<Vec<Vec<u8>>, Refusal> {
        self.range(f64::NEG_INFINITY, f64::INFINITY, false, n)
    }

    /// `HMGET <key> <field>…` (the key a hash or absent, else `WRONGTYPE`).
    pub fn hash_get<const N: usize>(
        &self,
        fields: [&[u8]; N],
    ) -> Result<[Option<Vec<u8>>; N], Refusal> {
        let mut out = std::array::from_fn(|_| None);
        if !self.hash()? {
            return Ok(out);
        }
        for (slot, field) in out.iter_mut().zip(fields) {
            let name = self.db.string(field);
            let mut value: *mut RString = ptr::null_mut();
            // SAFETY: an open hash key, a live field, a pointer to receive the value; NULL ends
            // the list. The value string (if any) is freed after its bytes are copied.
            unsafe {
                raw::RedisModule_HashGet.unwrap()(
                    self.ptr,
                    raw::REDISMODULE_HASH_NONE as c_int,
                    name.ptr,
                    &mut value as *mut *mut RString,
                    ptr::null_mut::<RString>(),
                );
                if !value.is_null() {
                    *slot = Some(bytes_of(value));
                    raw::RedisModule_FreeString.unwrap()(self.db.ctx, value);
                }
            }
        }
        Ok(out)
    }

    /// A write through a key opened read-only: the write guard refused first (never reached).
    fn writing(&self) -> Result<(), Refusal> {
        if self.write {
            Ok(())
        } else {
            Err(errors::readonly())
        }
    }

    /// `ZADD <key> <score> <member>`: the score is an integer, written exactly (as a double,
    /// replicated as its decimal text). A member already at that score is left as it is, with no
    /// signal, notification or replication (as `ZADD` reporting 0 changes).
    pub fn zadd(&mut self, score: i64, member: &[u8]) -> Result<Zadd, Refusal> {
        self.zadd_when(When::Always, score, member)
    }

    /// `ZADD <key> [NX|XX] <score> <member>`, as [`Key::zadd`]; a held-back write is
    /// [`Zadd::Skipped`]. Replicated as a plain `ZADD` (the condition held on the primary).
    pub fn zadd_when(&mut self, when: When, score: i64, member: &[u8]) -> Result<Zadd, Refusal> {
        self.writing()?;
        if when == When::Existing && self.kind() == Kind::None {
            // The module API would create the (empty) set before declining the member.
            return Ok(Zadd::Skipped);
        }
        let elem = self.db.string(member);
        let mut flags: c_int = match when {
            When::Always => 0,
            When::New => raw::REDISMODULE_ZADD_NX as c_int,
            When::Existing => raw::REDISMODULE_ZADD_XX as c_int,
        };
        // SAFETY: a key open for writing and a live member string.
        let done = unsafe {
            raw::RedisModule_ZsetAdd.unwrap()(self.ptr, score as f64, elem.ptr, &mut flags)
        };
        if done != raw::Status::Ok as c_int {
            return Err(errors::wrongtype());
        }
        let outcome = if flags & raw::REDISMODULE_ZADD_ADDED as c_int != 0 {
            Zadd::Added
        } else if flags & raw::REDISMODULE_ZADD_UPDATED as c_int != 0 {
            Zadd::Updated
        } else if flags & raw::REDISMODULE_ZADD_NOP as c_int != 0 {
            return Ok(Zadd::Skipped);
        } else {
            return Ok(Zadd::Unchanged);
        };
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_ZSET, c"zadd", &self.name);
        // SAFETY: `s` takes a live string object, `l` a long long (replicated as its decimal
        // text); the server takes its own references.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                db.ctx,
                c"ZADD".as_ptr(),
                c"sls".as_ptr(),
                self.name.ptr,
                score as std::ffi::c_longlong,
                elem.ptr,
            )
        };
        Ok(outcome)
    }

    /// `ZREM <key> <member>` → whether it was a member. An emptied set is deleted.
    pub fn zrem(&mut self, member: &[u8]) -> Result<bool, Refusal> {
        self.writing()?;
        let elem = self.db.string(member);
        let mut deleted: c_int = 0;
        // SAFETY: a key open for writing and a live member string.
        let done = unsafe { raw::RedisModule_ZsetRem.unwrap()(self.ptr, elem.ptr, &mut deleted) };
        if done != raw::Status::Ok as c_int {
            return Err(errors::wrongtype());
        }
        if deleted == 0 {
            return Ok(false);
        }
        let db = self.db;
        db.notify(raw::REDISMODULE_NOTIFY_ZSET, c"zrem", &self.name);
        if self.kind() == Kind::None {
            db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        }
        db.signal(&self.name);
        db.replicate2(c"ZREM", &self.name, &elem, true);
        Ok(true)
    }

    /// `HSET <key> <field> <value> …` (always a change, as `HSET` counts it); 1 to 5 pairs.
    pub fn hset(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), Refusal> {
        const MAX_PAIRS: usize = 5;
        assert!(
            (1..=MAX_PAIRS).contains(&pairs.len()),
            "HSET of 1 to {MAX_PAIRS} pairs"
        );
        self.writing()?;
        if !matches!(self.kind(), Kind::Hash | Kind::None) {
            return Err(errors::wrongtype());
        }
        let db = self.db;
        let mut strings: [Option<Str>; 2 * MAX_PAIRS] = Default::default();
        for (i, (field, value)) in pairs.iter().enumerate() {
            let (field, value) = (db.string(field), db.string(value));
            // SAFETY: a hash key open for writing; live field and value; NULL ends the list.
            unsafe {
                raw::RedisModule_HashSet.unwrap()(
                    self.ptr,
                    raw::REDISMODULE_HASH_NONE as c_int,
                    field.ptr,
                    value.ptr,
                    ptr::null_mut::<RString>(),
                )
            };
            strings[2 * i] = Some(field);
            strings[2 * i + 1] = Some(value);
        }
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hset", &self.name);
        let mut a = [ptr::null_mut::<RString>(); 2 * MAX_PAIRS];
        for (slot, s) in a.iter_mut().zip(strings.iter().flatten()) {
            *slot = s.ptr;
        }
        let (hset, key) = (c"HSET", self.name.ptr);
        // SAFETY: the API is resolved at load time; each `s` takes a live string object (the
        // server takes its own references); `v` an array of them and its length.
        unsafe {
            let replicate = raw::RedisModule_Replicate.unwrap();
            match pairs.len() {
                1 => replicate(db.ctx, hset.as_ptr(), c"sss".as_ptr(), key, a[0], a[1]),
                2 => replicate(
                    db.ctx,
                    hset.as_ptr(),
                    c"sssss".as_ptr(),
                    key,
                    a[0],
                    a[1],
                    a[2],
                    a[3],
                ),
                3 => replicate(
                    db.ctx,
                    hset.as_ptr(),
                    c"sssssss".as_ptr(),
                    key,
                    a[0],
                    a[1],
                    a[2],
                    a[3],
                    a[4],
                    a[5],
                ),
                _ => replicate(
                    db.ctx,
                    hset.as_ptr(),
                    c"sv".as_ptr(),
                    key,
                    a.as_ptr(),
                    2 * pairs.len(),
                ),
            }
        };
        Ok(())
    }

    /// `HINCRBY <key> <field> <by>` → the new value. The field must be absent (counts as 0) or
    /// hold an integer whose sum with `by` fits an `i64`, else the server's own texts
    /// (`ERR hash value is not an integer`, `ERR increment or decrement would overflow`), nothing
    /// written. Replicated as the plain `HINCRBY`.
    pub fn hincrby(&mut self, field: &[u8], by: i64) -> Result<i64, Refusal> {
        self.writing()?;
        let [current] = self.hash_get([field])?;
        let current = match current {
            None => 0,
            // An integer as the server writes one: no sign but `-`, no leading zero.
            Some(text) => std::str::from_utf8(&text)
                .ok()
                .and_then(|t| t.parse::<i64>().ok().filter(|n| n.to_string() == t))
                .ok_or_else(errors::not_an_integer)?,
        };
        let value = current.checked_add(by).ok_or_else(errors::overflow)?;
        let db = self.db;
        let (name, text) = (db.string(field), value.to_string());
        let text = db.string(text.as_bytes());
        // SAFETY: a hash key open for writing (or absent); live field and value; NULL ends the
        // list.
        unsafe {
            raw::RedisModule_HashSet.unwrap()(
                self.ptr,
                raw::REDISMODULE_HASH_NONE as c_int,
                name.ptr,
                text.ptr,
                ptr::null_mut::<RString>(),
            )
        };
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hincrby", &self.name);
        // SAFETY: `s` takes a live string object, `l` a long long; the server takes its own
        // references.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                db.ctx,
                c"HINCRBY".as_ptr(),
                c"ssl".as_ptr(),
                self.name.ptr,
                name.ptr,
                by as std::ffi::c_longlong,
            )
        };
        Ok(value)
    }

    /// `HDEL <key> <field>` → whether the field was there. An emptied hash is deleted.
    pub fn hdel(&mut self, field: &[u8]) -> Result<bool, Refusal> {
        self.writing()?;
        if !self.hash()? {
            return Ok(false);
        }
        let field = self.db.string(field);
        // SAFETY: a hash key open for writing; a live field; NULL ends the list.
        let n = unsafe {
            raw::RedisModule_HashSet.unwrap()(
                self.ptr,
                raw::REDISMODULE_HASH_NONE as c_int,
                field.ptr,
                HASH_DELETE,
                ptr::null_mut::<RString>(),
            )
        };
        if n == 0 {
            return Ok(false);
        }
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_HASH, c"hdel", &self.name);
        if self.kind() == Kind::None {
            db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        }
        db.replicate2(c"HDEL", &self.name, &field, true);
        Ok(true)
    }

    /// `DEL <key>` (any type) → whether it existed.
    pub fn delete(&mut self) -> Result<bool, Refusal> {
        self.writing()?;
        if self.kind() == Kind::None {
            return Ok(false);
        }
        // SAFETY: a key open for writing.
        unsafe { raw::RedisModule_DeleteKey.unwrap()(self.ptr) };
        let db = self.db;
        db.signal(&self.name);
        db.notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del", &self.name);
        // SAFETY: `s` takes a live string object; the server takes its own reference.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                db.ctx,
                c"DEL".as_ptr(),
                c"s".as_ptr(),
                self.name.ptr,
            )
        };
        Ok(true)
    }
}

//! One verb's access to the keyspace, [`Db`]: it opens each key the verb touches once,
//! publishes the wake and signals the clients waiting on a key.

use std::ffi::c_int;
use std::marker::PhantomData;

use valkey_module::{raw, Context};

use super::ffi;
use super::key::Key;
use super::scope::{Args, Scope};
use crate::errors::Refusal;

/// One verb's access to the keyspace.
pub struct Db<'a> {
    scope: Scope,
    /// Whether [`Db::open`] opens keys for writing (the node takes writes).
    writable: bool,
    _args: PhantomData<Args<'a>>,
}

impl<'a> Db<'a> {
    /// The keyspace as the verb called with `args` sees it; `writable`: whether this node takes
    /// writes now (the write guard would pass), so that the keys the verb writes are opened for
    /// writing from the start.
    pub fn new(ctx: &'a Context, args: Args<'a>, writable: bool) -> Self {
        Db {
            scope: Scope::new(ctx.ctx, args),
            writable,
            _args: PhantomData,
        }
    }

    /// The keyspace as the module's own timers see it in `ctx` (no command, no arguments): keys
    /// the work writes are opened for writing (the caller checked that the node takes writes).
    pub fn housekeeping(ctx: &'a Context) -> Self {
        Db::new(ctx, Args::none(), true)
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
        let name = self.scope.opening(key);
        let ptr = ffi::open_key(self.scope.ctx, name.ptr, write);
        Key::new(&self.scope, name, ptr, write)
    }

    /// `DEL <key>` (any type) → whether it existed.
    pub fn del(&self, key: &[u8]) -> Result<bool, Refusal> {
        self.open(key).delete()
    }

    /// Signals `key` ready: clients waiting on it ([`super::wait_on`]) are woken after this
    /// command, when the key exists then.
    pub fn signal_ready(&self, key: &[u8]) {
        let name = self.scope.string(key);
        ffi::signal_key_as_ready(self.scope.ctx, name.ptr);
    }

    /// `SPUBLISH <channel> <message>` as the command runs it: delivered to this node's
    /// shard-channel subscribers (and, in cluster mode, to the other nodes of its shard over
    /// the cluster bus), and, outside cluster mode, replicated to the replicas only (not to the
    /// AOF) — as a script's `SPUBLISH` is.
    pub fn spublish(&self, channel: &[u8], message: &[u8]) {
        let scope = &self.scope;
        let (channel, message) = (scope.string(channel), scope.string(message));
        ffi::publish_shard(scope.ctx, channel.ptr, message.ptr);
        let flags = ffi::context_flags(scope.ctx);
        if flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER as c_int == 0 {
            scope.replicate(c"SPUBLISH", &[&channel, &message], false);
        }
    }
}

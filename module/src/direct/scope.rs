//! What the keys a verb opens share: its context, its arguments ([`Args`], whose string objects
//! are passed as themselves), the names of the keys open now (a key is never open twice at
//! once), and the signals, notifications and replication of its writes ([`Scope`]).

use std::cell::RefCell;
use std::ffi::{c_int, CStr};

use super::ffi::{self, RCtx, RString};
use super::strings::{interned, Str};

/// The most arguments a verb takes (`EMQ.FAIL`: 13); more are never matched by address.
const MAX_ARGS: usize = 16;

/// The most keys a verb holds open at once.
const MAX_OPEN: usize = 16;

/// The most arguments one replicated command carries (`HSET <row>` and the nine field-value
/// pairs of an `ADD` with every field).
pub(super) const MAX_REPLICATED: usize = 1 + 2 * super::key::HSET_MAX_PAIRS;

/// A command's arguments as the server passes them (the command name first).
#[derive(Clone, Copy)]
pub struct Args<'a> {
    strings: &'a [*mut RString],
}

impl<'a> Args<'a> {
    /// The `argc` arguments of the running command.
    pub(super) fn new(argv: *mut *mut RString, argc: c_int) -> Args<'a> {
        Args {
            strings: ffi::arguments(argv, argc),
        }
    }

    /// No arguments: the scope of work that no command called (the module's timers).
    pub fn none() -> Args<'a> {
        Args { strings: &[] }
    }

    /// How many arguments (the command name included).
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether there is no argument at all.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Argument `i` as the server's string object (a waiting command's key).
    pub(super) fn string(&self, i: usize) -> *mut RString {
        self.strings[i]
    }

    /// The bytes of argument `i`; they live as long as the command runs.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        ffi::string_bytes(self.strings[i])
    }
}

/// Where some bytes live: the address and length of a slice (compared, never dereferenced).
type Place = (*const u8, usize);

fn place(bytes: &[u8]) -> Place {
    (bytes.as_ptr(), bytes.len())
}

/// The names (string objects) of the keys a verb holds open: a key is never open twice at once.
struct OpenSet {
    names: [*mut RString; MAX_OPEN],
    n: usize,
}

impl OpenSet {
    fn new() -> Self {
        OpenSet {
            names: [std::ptr::null_mut(); MAX_OPEN],
            n: 0,
        }
    }

    /// Records `name` as open; panics when a key open now has the same name (`same`) or too many
    /// are open.
    fn open(&mut self, name: *mut RString, same: impl Fn(*mut RString) -> bool) {
        let open = &self.names[..self.n];
        assert!(
            !open.iter().any(|&other| same(other)),
            "a key open twice in one verb"
        );
        assert!(self.n < MAX_OPEN, "too many keys open in one verb");
        self.names[self.n] = name;
        self.n += 1;
    }

    /// Forgets `name` as open.
    fn closed(&mut self, name: *mut RString) {
        if let Some(i) = self.names[..self.n].iter().position(|&n| n == name) {
            self.names[i] = self.names[self.n - 1];
            self.n -= 1;
        }
    }
}

/// What a verb's open keys share.
pub(super) struct Scope {
    pub(super) ctx: *mut RCtx,
    /// The verb's arguments: where their bytes live, and their string objects.
    args: [(Place, *mut RString); MAX_ARGS],
    nargs: usize,
    open: RefCell<OpenSet>,
}

impl Scope {
    /// The scope of the verb called with `args` in `ctx`.
    pub(super) fn new(ctx: *mut RCtx, args: Args) -> Self {
        let mut table = [((std::ptr::null(), 0), std::ptr::null_mut()); MAX_ARGS];
        let nargs = args.len().min(MAX_ARGS);
        for (i, slot) in table.iter_mut().enumerate().take(nargs) {
            *slot = (place(args.bytes(i)), args.strings[i]);
        }
        Scope {
            ctx,
            args: table,
            nargs,
            open: RefCell::new(OpenSet::new()),
        }
    }

    /// `bytes` as a string object: an interned string, the argument it is (same address and
    /// length), or a new string.
    pub(super) fn string(&self, bytes: &[u8]) -> Str {
        let arg = || find_arg(&self.args[..self.nargs], bytes);
        match interned(bytes).or_else(arg) {
            Some(ptr) => Str::borrowed(self.ctx, ptr),
            None => Str::of(self.ctx, bytes),
        }
    }

    /// `key`'s name as a string object, recorded as open (panics when it is open already).
    pub(super) fn opening(&self, key: &[u8]) -> Str {
        let name = self.string(key);
        let same = |other: *mut RString| ffi::string_bytes(other) == key;
        self.open.borrow_mut().open(name.ptr, same);
        name
    }

    /// Forgets `name` as open (its key closed).
    pub(super) fn closed(&self, name: *mut RString) {
        self.open.borrow_mut().closed(name);
    }

    /// `WATCH` / client-side-caching invalidation of `key`, as the plain command signals it.
    pub(super) fn signal(&self, key: &Str) {
        ffi::signal_modified(self.ctx, key.ptr);
    }

    /// One keyspace notification, as the plain command fires it.
    pub(super) fn notify(&self, class: c_int, event: &CStr, key: &Str) {
        ffi::notify(self.ctx, class, event, key.ptr);
    }

    /// Replicates `command <args…>` to the AOF and the replicas (`aof` false: replicas only);
    /// at most [`MAX_REPLICATED`] arguments.
    pub(super) fn replicate(&self, command: &CStr, args: &[&Str], aof: bool) {
        assert!(
            args.len() <= MAX_REPLICATED,
            "too many arguments to replicate"
        );
        let mut ptrs = [std::ptr::null_mut(); MAX_REPLICATED];
        for (slot, s) in ptrs.iter_mut().zip(args) {
            *slot = s.ptr;
        }
        ffi::replicate(self.ctx, command, &ptrs[..args.len()], aof);
    }
}

/// The string object of the argument whose bytes are `bytes` itself (same address and length),
/// if any.
fn find_arg(args: &[(Place, *mut RString)], bytes: &[u8]) -> Option<*mut RString> {
    args.iter()
        .find(|(at, _)| *at == place(bytes))
        .map(|&(_, ptr)| ptr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_is_found_by_address_not_by_value() {
        let (a, b) = (b"emq:{q}:pending".to_vec(), b"emq:{q}:pending".to_vec());
        let s1: *mut RString = std::ptr::dangling_mut();
        let s2: *mut RString = std::ptr::without_provenance_mut(16);
        let table = [(place(&a), s1), (place(&b[..5]), s2)];
        assert_eq!(find_arg(&table, &a), Some(s1));
        assert_eq!(find_arg(&table, &b[..5]), Some(s2));
        assert_eq!(
            find_arg(&table, &b),
            None,
            "equal bytes elsewhere are another string"
        );
        assert_eq!(
            find_arg(&table, &a[..5]),
            None,
            "a prefix is another string"
        );
    }

    /// A fake string object for key `i`, never dereferenced.
    fn name(i: usize) -> *mut RString {
        std::ptr::without_provenance_mut(8 * (i + 1))
    }

    #[test]
    fn a_key_is_open_once_at_a_time() {
        let mut open = OpenSet::new();
        open.open(name(0), |other| other == name(0));
        open.open(name(1), |other| other == name(1));
        open.closed(name(0));
        open.open(name(0), |other| other == name(0));
        assert_eq!(open.n, 2);
        let again = std::panic::catch_unwind(move || open.open(name(2), |other| other == name(1)));
        assert!(
            again.is_err(),
            "another object with the same bytes is the same key"
        );
    }

    #[test]
    fn at_most_sixteen_keys_are_open() {
        let mut open = OpenSet::new();
        for i in 0..MAX_OPEN {
            open.open(name(i), |other| other == name(i));
        }
        let more = std::panic::catch_unwind(move || open.open(name(99), |_| false));
        assert!(more.is_err());
    }
}

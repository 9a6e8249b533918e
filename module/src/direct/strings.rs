//! String objects for the server: the strings interned at load (field names, states, the brand
//! key, the run id), and [`Str`], a string object a verb passes — borrowed (an interned string,
//! one of its own arguments) or created for the call and freed when it drops.

use std::sync::OnceLock;

use super::ffi::{self, RCtx, RString, Shared};

/// The longest interned string.
const MAX_INTERNED: usize = 64;

/// The interned strings, sorted by length; `by_len[n]` is the range of those of length `n`.
struct Table {
    strings: Vec<(&'static [u8], Shared)>,
    by_len: [(usize, usize); MAX_INTERNED + 1],
}

impl Table {
    /// `strings` (those of at most [`MAX_INTERNED`] bytes), each made a string object by
    /// `create`.
    fn new(strings: &[&'static [u8]], create: impl Fn(&[u8]) -> *mut RString) -> Table {
        let mut strings: Vec<(&'static [u8], Shared)> = strings
            .iter()
            .filter(|bytes| bytes.len() <= MAX_INTERNED)
            .map(|&bytes| (bytes, Shared(create(bytes))))
            .collect();
        strings.sort_by_key(|(bytes, _)| bytes.len());
        let mut by_len = [(0, 0); MAX_INTERNED + 1];
        for (n, range) in by_len.iter_mut().enumerate() {
            let start = strings.partition_point(|(bytes, _)| bytes.len() < n);
            let end = strings.partition_point(|(bytes, _)| bytes.len() <= n);
            *range = (start, end);
        }
        Table { strings, by_len }
    }

    /// The interned string object with these bytes, if any.
    fn get(&self, bytes: &[u8]) -> Option<*mut RString> {
        let &(start, end) = self.by_len.get(bytes.len())?;
        self.strings[start..end]
            .iter()
            .find(|(interned, _)| *interned == bytes)
            .map(|(_, s)| s.0)
    }
}

static INTERNED: OnceLock<Table> = OnceLock::new();

/// Module load: `strings` (at most 64 bytes each) become string objects that live as long as
/// the process.
pub fn intern(strings: &[&'static [u8]]) {
    let table = Table::new(strings, |bytes| {
        ffi::create_string(std::ptr::null_mut(), bytes)
    });
    let _ = INTERNED.set(table);
}

/// The interned string object with these bytes, if any.
pub(super) fn interned(bytes: &[u8]) -> Option<*mut RString> {
    INTERNED.get().and_then(|table| table.get(bytes))
}

/// A string object for the server: borrowed (an argument, an interned string) or created here
/// and freed on drop.
pub(super) struct Str {
    ctx: *mut RCtx,
    pub(super) ptr: *mut RString,
    owned: bool,
}

impl Str {
    /// A string object someone else owns for longer than this `Str` (an interned string, an
    /// argument of the running command).
    pub(super) fn borrowed(ctx: *mut RCtx, ptr: *mut RString) -> Str {
        Str {
            ctx,
            ptr,
            owned: false,
        }
    }

    /// `bytes` as a string object: an interned string, or a new string freed when the [`Str`]
    /// drops.
    pub(super) fn of(ctx: *mut RCtx, bytes: &[u8]) -> Str {
        match interned(bytes) {
            Some(ptr) => Str::borrowed(ctx, ptr),
            None => Str {
                ctx,
                ptr: ffi::create_string(ctx, bytes),
                owned: true,
            },
        }
    }
}

impl Drop for Str {
    fn drop(&mut self) {
        if self.owned {
            ffi::free_string(self.ctx, self.ptr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake string object: the address of a distinct static byte, never dereferenced.
    fn fake(i: usize) -> *mut RString {
        static SLOTS: [u8; 32] = [0; 32];
        (&SLOTS[i] as *const u8).cast_mut().cast()
    }

    #[test]
    fn finds_each_interned_string_by_its_bytes() {
        let strings: [&'static [u8]; 6] = [b"state", b"0", b"1", b"pending", b"dead", b""];
        let created = std::cell::Cell::new(0);
        let table = Table::new(&strings, |_| {
            created.set(created.get() + 1);
            fake(created.get())
        });
        assert_eq!(created.get(), strings.len());
        let mut seen = Vec::new();
        for bytes in strings {
            let ptr = table.get(bytes).expect("interned");
            assert!(!seen.contains(&ptr), "one object per string");
            seen.push(ptr);
        }
        for other in [&b"stat"[..], b"states", b"2", b"x", b"PENDING"] {
            assert_eq!(table.get(other), None, "{other:?}");
        }
    }

    #[test]
    fn longer_strings_are_not_interned() {
        let long: &'static [u8] = &[b'x'; MAX_INTERNED + 1];
        let edge: &'static [u8] = &[b'y'; MAX_INTERNED];
        let table = Table::new(&[long, edge], |_| fake(0));
        assert_eq!(table.get(long), None);
        assert_eq!(table.get(edge), Some(fake(0)));
        assert_eq!(table.get(&[b'x'; 500]), None);
    }
}

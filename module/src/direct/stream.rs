//! An open key's stream reads and writes (the event bus): `XADD … MAXLEN ~` and `XTRIM … MINID
//! ~`, each with exactly the effects of its plain command (see the parent module): the same
//! change (the same whole nodes trimmed: the module API trims as the commands do), the
//! notifications `xadd` / `xtrim`, the `WATCH` signal, clients blocked on the stream served, and
//! the command replicated as the server rewrites it for its replicas and AOF.

use std::ffi::c_int;

use valkey_module::raw;

use super::ffi::{self, RString, StreamId};
use super::key::{Key, Kind};
use super::strings::Str;
use crate::errors::Refusal;

/// The most field-value pairs one entry carries (`completed` with its result and the next lease:
/// event, id, attempt, result, next, next_attempt).
pub const MAX_PAIRS: usize = 6;

const NOTIFY_STREAM: c_int = raw::REDISMODULE_NOTIFY_STREAM;

fn id_text((ms, seq): StreamId) -> String {
    format!("{ms}-{seq}")
}

impl Key<'_> {
    /// The first entry's id of a stream (`None`: absent, empty, or not a stream).
    pub fn first_id(&self) -> Option<StreamId> {
        (self.kind() == Kind::Stream)
            .then(|| ffi::stream_first_id(self.ptr))
            .flatten()
    }

    /// `XADD <key> MAXLEN ~ <maxlen> * <fields…>` (`fields`: names and values alternating, 1 to
    /// [`MAX_PAIRS`] pairs) → whether an entry was added; a key of another type is left as it
    /// is (`false`). Replicated as `XADD <key> MAXLEN = <length> <id> <fields…>`.
    pub fn xadd(&mut self, maxlen: i64, fields: &[&[u8]]) -> Result<bool, Refusal> {
        assert!(
            fields.len().is_multiple_of(2) && (2..=2 * MAX_PAIRS).contains(&fields.len()),
            "XADD of 1 to {MAX_PAIRS} pairs"
        );
        self.writing()?;
        if !matches!(self.kind(), Kind::Stream | Kind::None) {
            return Ok(false);
        }
        let db = self.db;
        let mut strings: [Option<Str>; 2 * MAX_PAIRS] = Default::default();
        let mut ptrs: [*mut RString; 2 * MAX_PAIRS] = [std::ptr::null_mut(); 2 * MAX_PAIRS];
        for ((slot, ptr), bytes) in strings.iter_mut().zip(ptrs.iter_mut()).zip(fields) {
            let s = db.string(bytes);
            *ptr = s.ptr;
            *slot = Some(s);
        }
        let Some(id) = ffi::stream_add(self.ptr, &ptrs[..fields.len()]) else {
            return Ok(false);
        };
        db.notify(NOTIFY_STREAM, c"xadd", &self.name);
        if ffi::stream_trim_len(self.ptr, maxlen) > 0 {
            db.notify(NOTIFY_STREAM, c"xtrim", &self.name);
        }
        db.signal(&self.name);
        let (maxlen_word, exact) = (db.string(b"MAXLEN"), db.string(b"="));
        let length = db.string(ffi::value_length(self.ptr).to_string().as_bytes());
        let id = db.string(id_text(id).as_bytes());
        let mut args: [&Str; 5 + 2 * MAX_PAIRS] = [&self.name; 5 + 2 * MAX_PAIRS];
        args[1] = &maxlen_word;
        args[2] = &exact;
        args[3] = &length;
        args[4] = &id;
        for (slot, s) in args[5..].iter_mut().zip(strings.iter().flatten()) {
            *slot = s;
        }
        db.replicate(c"XADD", &args[..5 + fields.len()], true);
        Ok(true)
    }

    /// `XTRIM <key> MINID ~ <ms>` (whole nodes whose last id is below `<ms>-0`); a key that is
    /// not a stream is left as it is. When entries were deleted: replicated as
    /// `XTRIM <key> MINID = <the first id left>`.
    pub fn xtrim_minid(&mut self, ms: u64) -> Result<(), Refusal> {
        self.writing()?;
        if self.kind() != Kind::Stream || ffi::stream_trim_id(self.ptr, ms) == 0 {
            return Ok(());
        }
        let db = self.db;
        db.notify(NOTIFY_STREAM, c"xtrim", &self.name);
        db.signal(&self.name);
        // As the server rewrites it: an emptied stream's first id is the largest id.
        let first = ffi::stream_first_id(self.ptr).unwrap_or((u64::MAX, u64::MAX));
        let (minid, exact) = (db.string(b"MINID"), db.string(b"="));
        let first = db.string(id_text(first).as_bytes());
        db.replicate(c"XTRIM", &[&self.name, &minid, &exact, &first], true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_as_the_server_prints_them() {
        assert_eq!(id_text((1_700_000_000_123, 0)), "1700000000123-0");
        assert_eq!(id_text((5, 17)), "5-17");
        assert_eq!(
            id_text((u64::MAX, u64::MAX)),
            "18446744073709551615-18446744073709551615"
        );
    }
}

//! The wire-4 key grammar, mirrored on the server: `emq:{<q>}:<type>`, every key and its type
//! from the protocol data (`build.rs` makes the constants).
//!
//! Pure byte functions. A verb recovers one queue name from its anchor key, then rebuilds every
//! other key it was given and compares byte for byte.

/// The node's brand key.
pub use crate::protocol::VERSION_KEY;
/// The 3-byte namespace of a job id.
pub const JOB: &[u8] = b"JOB";

// The text around the queue name (`PREFIX`, `CLOSE`) and one constant per queue key of the data
// (`PENDING`, …, `BASE` = the empty type, `ROW` = `job:`, the derived `EVENTS`, `WAKE`, `LIMITS`,
// `RATE`, `GROUPS`, `PARKED`, `GROUP`, `RECORD`, `REPEAT`): what follows the base.
include!(concat!(env!("OUT_DIR"), "/keys.rs"));

/// Splits `emq:{<name>}:<type>` into `(name, type)`: the name runs to the first `}`, which must
/// be followed by `:`. `None` without the `emq:{` prefix or without `}:` after the name.
pub fn split_queue_key(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = key.strip_prefix(PREFIX)?;
    let close = rest.iter().position(|&b| b == b'}')?;
    let (name, tail) = rest.split_at(close);
    let kind = tail.strip_prefix(CLOSE)?;
    Some((name, kind))
}

/// The longest queue name, in bytes.
pub const MAX_QUEUE_NAME: usize = 255;

/// A queue name the module accepts: 1 to [`MAX_QUEUE_NAME`] bytes, none of them `{`, `}` or a
/// control byte (0x00–0x1F, 0x7F).
pub fn valid_queue(name: &[u8]) -> bool {
    (1..=MAX_QUEUE_NAME).contains(&name.len())
        && !name
            .iter()
            .any(|&b| matches!(b, b'{' | b'}' | 0x00..=0x1f | 0x7f))
}

/// Whether an id carries the `JOB` namespace (the only id gate inside a transition).
pub fn is_job_id(id: &[u8]) -> bool {
    id.starts_with(JOB)
}

/// A key built from parts: kept inline when short (every key of a usual queue name and id).
#[derive(Clone)]
pub enum KeyBuf {
    Inline([u8; KeyBuf::INLINE], usize),
    Heap(Vec<u8>),
}

impl KeyBuf {
    const INLINE: usize = 96;

    /// The concatenation of `parts`.
    fn of(parts: &[&[u8]]) -> KeyBuf {
        let len: usize = parts.iter().map(|part| part.len()).sum();
        if len > Self::INLINE {
            return KeyBuf::Heap(parts.concat());
        }
        let mut buf = [0u8; Self::INLINE];
        let mut at = 0;
        for part in parts {
            buf[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        KeyBuf::Inline(buf, len)
    }
}

impl std::ops::Deref for KeyBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            KeyBuf::Inline(buf, len) => &buf[..*len],
            KeyBuf::Heap(key) => key,
        }
    }
}

impl std::fmt::Debug for KeyBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

/// One queue, recovered from an anchor key; builds every other key of that queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queue<'a> {
    name: &'a [u8],
}

impl<'a> Queue<'a> {
    /// The queue of `key` when `key` is exactly `emq:{<valid name>}:<kind>`.
    pub fn from_key(key: &'a [u8], kind: &[u8]) -> Option<Self> {
        let (name, found) = split_queue_key(key)?;
        (valid_queue(name) && found == kind).then_some(Queue { name })
    }

    /// The queue named `name`, when it is a valid name.
    pub fn named(name: &'a [u8]) -> Option<Self> {
        valid_queue(name).then_some(Queue { name })
    }

    /// The queue of a `schedule` or `active` key (the sets the module's timers watch).
    pub fn of_timed_key(key: &'a [u8]) -> Option<Self> {
        let (name, kind) = split_queue_key(key)?;
        (valid_queue(name) && (kind == SCHEDULE || kind == ACTIVE)).then_some(Queue { name })
    }

    /// The queue name.
    pub fn name(&self) -> &'a [u8] {
        self.name
    }

    /// `emq:{<q>}:<kind>`
    pub fn key(&self, kind: &[u8]) -> KeyBuf {
        KeyBuf::of(&[PREFIX, self.name, CLOSE, kind])
    }

    /// `emq:{<q>}:`
    pub fn base(&self) -> KeyBuf {
        self.key(BASE)
    }

    /// `emq:{<q>}:meta`
    pub fn meta(&self) -> KeyBuf {
        self.key(META)
    }

    /// `emq:{<q>}:group:<g>`: the ids of group `g` parked by flow control.
    pub fn group(&self, g: &[u8]) -> KeyBuf {
        KeyBuf::of(&[PREFIX, self.name, CLOSE, GROUP, g])
    }

    /// `emq:{<q>}:job:<id>`
    pub fn job(&self, id: &[u8]) -> KeyBuf {
        KeyBuf::of(&[PREFIX, self.name, CLOSE, ROW, id])
    }

    /// `emq:{<q>}:repeat:<name>`: a schedule's record.
    pub fn repeat(&self, name: &[u8]) -> KeyBuf {
        KeyBuf::of(&[PREFIX, self.name, CLOSE, REPEAT, name])
    }

    /// `emq:{<q>}:key:<key>`: an idempotency key's record.
    pub fn record(&self, key: &[u8]) -> KeyBuf {
        KeyBuf::of(&[PREFIX, self.name, CLOSE, RECORD, key])
    }

    /// Whether `key` is this queue's `<kind>` key, byte for byte.
    pub fn is(&self, key: &[u8], kind: &[u8]) -> bool {
        self.rest(key) == Some(kind)
    }

    /// Whether `key` is this queue's row for `id`, byte for byte.
    pub fn is_job(&self, key: &[u8], id: &[u8]) -> bool {
        self.rest(key).and_then(|rest| rest.strip_prefix(ROW)) == Some(id)
    }

    /// What follows `emq:{<q>}:` in `key`, when `key` starts so.
    fn rest<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        key.strip_prefix(PREFIX)?
            .strip_prefix(self.name)?
            .strip_prefix(CLOSE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_recovers_name_and_type() {
        assert_eq!(
            split_queue_key(b"emq:{q}:pending"),
            Some((&b"q"[..], &b"pending"[..]))
        );
        assert_eq!(split_queue_key(b"emq:{q}:"), Some((&b"q"[..], &b""[..])));
        assert_eq!(
            split_queue_key(b"emq:{q}:job:JOB1"),
            Some((&b"q"[..], &b"job:JOB1"[..]))
        );
        assert_eq!(
            split_queue_key(b"emq:{}:pending"),
            Some((&b""[..], &b"pending"[..]))
        );
    }

    #[test]
    fn the_timers_watch_schedule_and_active_keys_only() {
        let name = |key: &[u8]| Queue::of_timed_key(key).map(|q| q.name().to_vec());
        assert_eq!(name(b"emq:{q}:schedule"), Some(b"q".to_vec()));
        assert_eq!(name(b"emq:{a b}:active"), Some(b"a b".to_vec()));
        for key in [
            &b"emq:{q}:pending"[..],
            b"emq:{q}:job:JOB1",
            b"emq:{}:schedule",
            b"emq:{q}:schedule:x",
            b"emq:{q\0}:active",
            b"x:{q}:active",
        ] {
            assert_eq!(name(key), None, "{:?}", String::from_utf8_lossy(key));
        }
        assert_eq!(
            Queue::named(b"q").map(|q| q.meta().to_vec()),
            Some(b"emq:{q}:meta".to_vec())
        );
        assert_eq!(Queue::named(b""), None);
    }

    #[test]
    fn split_refuses_other_shapes() {
        for key in [
            &b"emq:q:pending"[..],
            b"EMQ:{q}:pending",
            b"x:{q}:pending",
            b"emq:{q}pending",
            b"emq:{q",
            b"emq:{q}",
            b"",
        ] {
            assert_eq!(
                split_queue_key(key),
                None,
                "{:?}",
                String::from_utf8_lossy(key)
            );
        }
    }

    #[test]
    fn names() {
        assert!(valid_queue(b"q"));
        assert!(valid_queue(b"a b:c\xff"));
        assert!(valid_queue(b" ~!\x80"));
        assert!(valid_queue(&[b'x'; MAX_QUEUE_NAME]));
        let too_long = [b'x'; MAX_QUEUE_NAME + 1];
        for name in [
            &b""[..],
            b"a{b",
            b"a}b",
            b"a\0b",
            b"{",
            b"}",
            b"a\tb",
            b"a\nb",
            b"a\rb",
            b"\x1f",
            b"a\x7f",
            b"\x01q",
            &too_long,
        ] {
            assert!(!valid_queue(name), "{:?}", String::from_utf8_lossy(name));
        }
        for byte in 0u8..=0xff {
            let control = byte < 0x20 || byte == 0x7f;
            let brace = byte == b'{' || byte == b'}';
            assert_eq!(
                valid_queue(&[b'q', byte]),
                !control && !brace,
                "byte {byte:#04x}"
            );
        }
    }

    #[test]
    fn from_key_checks_name_and_type() {
        assert_eq!(
            Queue::from_key(b"emq:{q}:pending", PENDING).map(|q| q.name()),
            Some(&b"q"[..])
        );
        assert_eq!(
            Queue::from_key(b"emq:{q}:", BASE).map(|q| q.name()),
            Some(&b"q"[..])
        );
        assert!(Queue::from_key(b"emq:{q}:active", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{}:pending", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{a{b}:pending", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{a\0b}:pending", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{a\nb}:pending", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{a\x7fb}:pending", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{a}b}:pending", PENDING).is_none());
        assert!(Queue::from_key(b"emq:{q}:pending ", PENDING).is_none());
        assert!(Queue::from_key(b"emq:q:pending", PENDING).is_none());
    }

    #[test]
    fn builders() {
        let q = Queue::from_key(b"emq:{orders}:pending", PENDING).unwrap();
        assert_eq!(&*q.key(ACTIVE), b"emq:{orders}:active");
        assert_eq!(&*q.key(SCHEDULE), b"emq:{orders}:schedule");
        assert_eq!(&*q.key(DONE), b"emq:{orders}:done");
        assert_eq!(&*q.key(DEAD), b"emq:{orders}:dead");
        assert_eq!(&*q.base(), b"emq:{orders}:");
        assert_eq!(&*q.meta(), b"emq:{orders}:meta");
        assert_eq!(&*q.key(WAKE), b"emq:{orders}:wake");
        assert_eq!(
            &*q.job(b"JOB0123456789a"),
            b"emq:{orders}:job:JOB0123456789a"
        );
        assert!(q.is(b"emq:{orders}:active", ACTIVE));
        assert!(!q.is(b"emq:{other}:active", ACTIVE));
        assert!(q.is_job(b"emq:{orders}:job:JOBx", b"JOBx"));
        let long = vec![b'x'; 200];
        let mut expected = b"emq:{orders}:job:".to_vec();
        expected.extend_from_slice(&long);
        assert_eq!(&*q.job(&long), expected.as_slice());
        assert!(!q.is_job(b"emq:{orders}:job:JOBy", b"JOBx"));
        assert!(!q.is_job(b"emq:{other}:job:JOBx", b"JOBx"));
    }

    #[test]
    fn job_ids() {
        assert!(is_job_id(b"JOB0123456789a"));
        assert!(is_job_id(b"JOB"));
        assert!(!is_job_id(b"JO"));
        assert!(!is_job_id(b"job0123456789a"));
        assert!(!is_job_id(b"XJOB"));
    }
}

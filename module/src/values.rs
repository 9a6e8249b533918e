//! The values step: the numeric value grammars of the protocol.
//!
//! Pure byte functions. Every numeric value is decimal text, checked before any domain read; a
//! refusal names the value and its rule: `ERR EMQ.<VERB> <name> must be <rule>`.

use crate::errors::{self, Refusal};
use crate::shape::{canonical_digits, decimal, Call};

/// The most digits a number may have (so that it is exact as a double and as an `i64`).
const DIGITS: usize = 15;

/// The largest *limit*.
pub const MAX_LIMIT: i64 = 10_000;

/// One value grammar of the protocol's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grammar {
    /// 1–15 digits, no sign, no leading zero, > 0 (a lease).
    Ms,
    /// `0` or 1–15 digits without a leading zero.
    Delay,
    /// `0` or 1–15 digits without a leading zero.
    Count,
    /// 1–15 digits, no leading zero, > 0.
    Positive,
    /// An optional `-` then a *count*; `-0` refused.
    Priority,
    /// A *positive* ≤ 10000.
    Limit,
}

/// One text grammar of the protocol's table (`"text": true` there): a value that is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextGrammar {
    /// Empty, or a W3C `traceparent` (optionally `;tracestate`) of at most [`MAX_TRACE`] bytes.
    Trace,
    /// Empty, or 1–[`MAX_LABEL`] bytes without a control byte (a group, an idempotency key).
    Label,
    /// Empty, or `<queue>` NUL `<id>`: a queue name by the queue-name rule and an id with the
    /// `JOB` prefix and no control byte (a flow parent).
    Parent,
    /// 1 to [`MAX_LABEL`] bytes without a control byte (a schedule's name).
    Name,
    /// Any bytes, at most its `max_bytes` (a job's payload).
    Payload,
    /// Any bytes, at most its `max_bytes` (a job's result, a flow child's result or error).
    Result,
    /// Any bytes, at most its `max_bytes` (a job's latest progress value).
    Progress,
    /// Any bytes, at most its `max_bytes` (one log line).
    Line,
    /// Any bytes, at most its `max_bytes` (a failed attempt's error text).
    Error,
    /// Any bytes, at most its `max_bytes` (a failed attempt's stack trace; empty: none).
    Stack,
}

// `Grammar::rule` and `TextGrammar::rule`, each grammar's rule text, and
// `TextGrammar::max_bytes`, each text grammar's size bound, made from the protocol data
// (`protocol.json` `grammars`) by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/grammars.rs"));

impl Grammar {
    /// The number `text` spells, when it is in this grammar.
    pub fn parse(self, text: &[u8]) -> Option<i64> {
        match self {
            Grammar::Delay | Grammar::Count => count(text),
            Grammar::Ms | Grammar::Positive => count(text).filter(|&n| n > 0),
            Grammar::Priority => match text.strip_prefix(b"-") {
                Some(magnitude) => count(magnitude).filter(|&n| n > 0).map(|n| -n),
                None => count(text),
            },
            Grammar::Limit => count(text).filter(|&n| (1..=MAX_LIMIT).contains(&n)),
        }
    }
}

/// `0` or 1–15 digits without a leading zero.
fn count(text: &[u8]) -> Option<i64> {
    canonical_digits(text, DIGITS)?;
    i64::try_from(decimal(text)).ok()
}

/// A declared numeric value of a verb (`protocol::<verb>::<SLOT>`): its place among the values,
/// the name a refusal gives it, its grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Number {
    /// The verb token, for the refusal.
    pub verb: &'static str,
    /// The place among the values.
    pub at: usize,
    /// The value's name in a refusal (`lease`, `max attempts`).
    pub name: &'static str,
    pub grammar: Grammar,
}

impl Number {
    /// Values step: the value given in `call` read by its grammar, or
    /// `ERR EMQ.<VERB> <name> must be <rule>`.
    pub fn read(self, call: &Call) -> Result<i64, Refusal> {
        self.parse(self.of(call))
    }

    /// The value's text as given in `call`.
    pub fn of<'a>(self, call: &Call<'a>) -> &'a [u8] {
        call.values[self.at]
    }

    /// `text` read by this value's grammar, or its refusal.
    pub fn parse(self, text: &[u8]) -> Result<i64, Refusal> {
        self.grammar
            .parse(text)
            .ok_or_else(|| errors::value(self.verb, self.name, self.grammar.rule()))
    }
}

/// A text grammar's size bound, for a constant (`0` for an unbounded grammar).
const fn bound(grammar: TextGrammar) -> usize {
    match grammar.max_bytes() {
        Some(max) => max,
        None => 0,
    }
}

/// The longest trace context a job carries, in bytes.
pub const MAX_TRACE: usize = bound(TextGrammar::Trace);

impl TextGrammar {
    /// Whether `text` is in this grammar: at most its `max_bytes`, and of its form.
    pub fn accepts(self, text: &[u8]) -> bool {
        if self.max_bytes().is_some_and(|max| text.len() > max) {
            return false;
        }
        match self {
            TextGrammar::Trace => text.is_empty() || trace(text),
            TextGrammar::Label => !text.iter().any(is_control),
            TextGrammar::Parent => text.is_empty() || parent(text).is_some(),
            TextGrammar::Name => !text.is_empty() && TextGrammar::Label.accepts(text),
            TextGrammar::Payload
            | TextGrammar::Result
            | TextGrammar::Progress
            | TextGrammar::Line
            | TextGrammar::Error
            | TextGrammar::Stack => true,
        }
    }
}

/// The longest label (a group, an idempotency key), in bytes.
pub const MAX_LABEL: usize = bound(TextGrammar::Label);

/// A C0 control byte or DEL.
fn is_control(b: &u8) -> bool {
    *b < 0x20 || *b == 0x7f
}

/// A flow parent's queue name and id, when `text` is `<queue>` NUL `<id>` in the grammar.
pub fn parent(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = text.iter().position(|&b| b == 0)?;
    let (queue, id) = (&text[..at], &text[at + 1..]);
    let named = crate::keyspace::valid_queue(queue);
    (named && id.starts_with(crate::keyspace::JOB) && !id.iter().any(is_control))
        .then_some((queue, id))
}

/// `<version>-<trace-id>-<parent-id>-<flags>` (2, 32, 16, 2 lower-case hex digits; version not
/// `ff`, neither id all zeros), optionally `;` and 1 or more printable ASCII bytes; at most
/// [`MAX_TRACE`] bytes in all.
fn trace(text: &[u8]) -> bool {
    if text.len() > MAX_TRACE {
        return false;
    }
    let (head, state) = match text.iter().position(|&b| b == b';') {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let hex = |part: &[u8], len: usize| part.len() == len && part.iter().all(is_lower_hex);
    let fields: Vec<&[u8]> = head.split(|&b| b == b'-').collect();
    let [version, trace_id, parent_id, flags] = fields[..] else {
        return false;
    };
    let zeros = |part: &[u8]| part.iter().all(|&b| b == b'0');
    hex(version, 2)
        && version != b"ff"
        && hex(trace_id, 32)
        && !zeros(trace_id)
        && hex(parent_id, 16)
        && !zeros(parent_id)
        && hex(flags, 2)
        && state.is_none_or(|s| !s.is_empty() && s.iter().all(|b| (0x20..=0x7e).contains(b)))
}

fn is_lower_hex(b: &u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(b)
}

/// A declared text value of a verb (`protocol::<verb>::<SLOT>`): its place among the values, the
/// name a refusal gives it, its grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Text {
    /// The verb token, for the refusal.
    pub verb: &'static str,
    /// The place among the values.
    pub at: usize,
    /// The value's name in a refusal (`trace`).
    pub name: &'static str,
    pub grammar: TextGrammar,
}

impl Text {
    /// The value's text as given in `call` (unchecked).
    pub fn of<'a>(self, call: &Call<'a>) -> &'a [u8] {
        call.values[self.at]
    }

    /// Values step: the value given in `call` when it is in its grammar, or
    /// `ERR EMQ.<VERB> <name> must be <rule>`.
    pub fn read<'a>(self, call: &Call<'a>) -> Result<&'a [u8], Refusal> {
        let text = call.values[self.at];
        if self.grammar.accepts(text) {
            Ok(text)
        } else {
            Err(errors::value(self.verb, self.name, self.grammar.rule()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BAD_ALWAYS: [&[u8]; 12] = [
        b"", b"00", b"01", b"+5", b"5.0", b"1e3", b" 5", b"5 ", b"0x1", b"\xff", b"--1", b"1-",
    ];

    fn accepts(grammar: Grammar, text: &[u8]) -> Option<i64> {
        grammar.parse(text)
    }

    #[test]
    fn labels() {
        let label = |t: &[u8]| TextGrammar::Label.accepts(t);
        assert!(label(b""));
        assert!(label(b"order-42 {x}:y"));
        assert!(label("g\u{e9}".as_bytes()));
        assert!(label(&[b'a'; 255]));
        assert!(!label(&[b'a'; 256]));
        for bad in [&b"a\x00b"[..], b"tab\t", b"\x7f", b"nl\n"] {
            assert!(!label(bad), "{bad:?}");
        }
    }

    #[test]
    fn parents() {
        let ok = |t: &[u8]| TextGrammar::Parent.accepts(t);
        assert!(ok(b""));
        assert!(ok(b"orders\x00JOB0000000000a"));
        assert!(ok(b"a b:c@d\x00JOBx"));
        assert_eq!(parent(b"q\x00JOB1"), Some((&b"q"[..], &b"JOB1"[..])));
        for bad in [
            &b"orders"[..],
            b"\x00JOB1",
            b"q\x00job1",
            b"q\x00JOB1\x00",
            b"a{b}\x00JOB1",
            b"q\x00JOB\n",
        ] {
            assert!(!ok(bad), "{bad:?}");
        }
        let long = [vec![b'q'; 256], b"\x00JOB1".to_vec()].concat();
        assert!(!ok(&long));
    }

    #[test]
    fn shared_refusals() {
        let all = [
            Grammar::Ms,
            Grammar::Delay,
            Grammar::Count,
            Grammar::Positive,
            Grammar::Priority,
            Grammar::Limit,
        ];
        for grammar in all {
            for bad in BAD_ALWAYS {
                assert_eq!(accepts(grammar, bad), None, "{grammar:?} {bad:?}");
            }
            assert_eq!(accepts(grammar, b"1000000000000000"), None, "{grammar:?}");
            assert_eq!(accepts(grammar, b"1"), Some(1), "{grammar:?}");
        }
    }

    #[test]
    fn positive_and_ms() {
        for grammar in [Grammar::Ms, Grammar::Positive] {
            assert_eq!(accepts(grammar, b"0"), None);
            assert_eq!(accepts(grammar, b"-1"), None);
            assert_eq!(accepts(grammar, b"30000"), Some(30000));
            assert_eq!(
                accepts(grammar, b"999999999999999"),
                Some(999_999_999_999_999)
            );
        }
    }

    #[test]
    fn delay_and_count() {
        for grammar in [Grammar::Delay, Grammar::Count] {
            assert_eq!(accepts(grammar, b"0"), Some(0));
            assert_eq!(accepts(grammar, b"-1"), None);
            assert_eq!(accepts(grammar, b"-0"), None);
            assert_eq!(accepts(grammar, b"250"), Some(250));
            assert_eq!(
                accepts(grammar, b"999999999999999"),
                Some(999_999_999_999_999)
            );
        }
    }

    #[test]
    fn priority() {
        let g = Grammar::Priority;
        assert_eq!(accepts(g, b"0"), Some(0));
        assert_eq!(accepts(g, b"7"), Some(7));
        assert_eq!(accepts(g, b"-7"), Some(-7));
        assert_eq!(accepts(g, b"-999999999999999"), Some(-999_999_999_999_999));
        for bad in [
            &b"-0"[..],
            b"-",
            b"-01",
            b"- 1",
            b"-1000000000000000",
            b"+7",
        ] {
            assert_eq!(accepts(g, bad), None, "{bad:?}");
        }
    }

    #[test]
    fn limit() {
        let g = Grammar::Limit;
        assert_eq!(accepts(g, b"1"), Some(1));
        assert_eq!(accepts(g, b"10000"), Some(10000));
        assert_eq!(accepts(g, b"0"), None);
        assert_eq!(accepts(g, b"10001"), None);
        assert_eq!(accepts(g, b"-1"), None);
    }

    #[test]
    fn refusal_names_the_value() {
        let backoff = crate::protocol::fail::BACKOFF;
        let err = backoff.parse(b"-1").unwrap_err();
        assert_eq!(
            err.as_bytes(),
            b"ERR EMQ.FAIL backoff must be a non-negative integer of milliseconds"
        );
        assert_eq!(backoff.parse(b"5"), Ok(5));
    }

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn trace() {
        let g = TextGrammar::Trace;
        assert!(g.accepts(b""));
        assert!(g.accepts(PARENT.as_bytes()));
        assert!(g.accepts(format!("{PARENT};congo=t61rcWkgMzE,rojo=00f067aa0ba902b7").as_bytes()));
        assert!(g.accepts(format!("{PARENT};{}", "a".repeat(MAX_TRACE - 56)).as_bytes()));
        let long = format!("{PARENT};{}", "a".repeat(MAX_TRACE - 55));
        let bad = [
            long.as_str(),
            "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01",
            "0-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01;",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 ",
            "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01",
            "x",
        ];
        for text in bad {
            assert!(!g.accepts(text.as_bytes()), "{text}");
        }
        assert!(!g.accepts(format!("{PARENT};a\tb").as_bytes()));
        assert!(!g.accepts(format!("{PARENT};\u{e9}").as_bytes()));
        assert_eq!(
            g.rule(),
            "empty or a W3C traceparent, optionally ;tracestate, of at most 512 bytes"
        );
    }

    #[test]
    fn name_grammar() {
        let g = TextGrammar::Name;
        let longest = "x".repeat(MAX_LABEL);
        for good in ["a", "nightly report", "ü:{}", longest.as_str()] {
            assert!(g.accepts(good.as_bytes()), "{good}");
        }
        let too_long = "x".repeat(MAX_LABEL + 1);
        for bad in ["", "a\tb", "a\0b", "a\x7fb", "\n", too_long.as_str()] {
            assert!(!g.accepts(bad.as_bytes()), "{bad:?}");
        }
        assert_eq!(g.rule(), "1 to 255 bytes, no control characters");
    }

    /// Each size-bounded grammar takes any bytes up to its `max_bytes`, and not one byte more.
    #[test]
    fn size_bounds() {
        let table = [
            (TextGrammar::Payload, 8 << 20),
            (TextGrammar::Result, 8 << 20),
            (TextGrammar::Progress, 64 << 10),
            (TextGrammar::Line, 16 << 10),
            (TextGrammar::Error, 16 << 10),
            (TextGrammar::Stack, 8 << 10),
        ];
        for (g, max) in table {
            assert_eq!(g.max_bytes(), Some(max), "{g:?}");
            assert!(g.accepts(b""), "{g:?}");
            assert!(g.accepts(&vec![0u8; max]), "{g:?}");
            assert!(!g.accepts(&vec![b'x'; max + 1]), "{g:?}");
            assert_eq!(g.rule(), format!("at most {max} bytes"), "{g:?}");
        }
        assert_eq!(TextGrammar::Parent.max_bytes(), None);
        assert_eq!((MAX_LABEL, MAX_TRACE), (255, 512));
    }

    /// The rule texts as the protocol's grammar table writes them.
    #[test]
    fn rule_texts() {
        let table = [
            (Grammar::Ms, "a positive integer of milliseconds"),
            (Grammar::Delay, "a non-negative integer of milliseconds"),
            (Grammar::Count, "a non-negative integer"),
            (Grammar::Positive, "a positive integer"),
            (Grammar::Priority, "an integer"),
            (Grammar::Limit, "an integer from 1 to 10000"),
        ];
        for (grammar, rule) in table {
            assert_eq!(grammar.rule(), rule, "{grammar:?}");
        }
    }
}

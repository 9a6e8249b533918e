//! The shape step: `<numkeys> <keys…> <values…>` against a verb's form.
//!
//! Pure byte functions. The count of keys is checked first, then the count of values; each
//! refusal names the verb's form as written in the protocol.

use crate::errors::{self, Refusal};
pub use crate::guard::Class;

/// What one declared key must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The queue key `emq:{q}:<type>` (the base `emq:{q}:` has the empty type).
    Key(&'static [u8]),
    /// The job row `emq:{q}:job:<id>`, `<id>` being the first value.
    Row,
    /// The node's brand key (`VERSION_KEY`, no queue).
    Version,
}

/// A verb's form: its token, its syntax as documented, its declared keys and its value count.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    /// Upper-case verb token (`ENQUEUE`); the command is `EMQ.<token>`.
    pub verb: &'static str,
    /// The syntax as written in the protocol (`EMQ.ENQUEUE 2 <row> <pending> <id> <payload>`).
    pub syntax: &'static str,
    /// The declared keys, in order.
    pub keys: &'static [Slot],
    /// The index in `keys` of the anchor: the key the queue name is recovered from.
    pub anchor: usize,
    /// Number of values after the keys.
    pub values: usize,
    /// Admission (refused over `maxmemory`) or drain (runs over it): the command's flags and
    /// its write guard.
    pub class: Class,
    /// The last values repeat (`EMQ.COMPLETEN`'s triples): `values` counts them once.
    pub repeat: Option<Repeat>,
}

/// A form's repeating values: its last `last` values, given 1 to `max` times in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    pub last: usize,
    pub max: usize,
}

impl Form {
    /// How many times a call of `n` values gives the repeating values (1 for a fixed form), or
    /// `None` when `n` does not fit the form.
    pub fn groups(&self, n: usize) -> Option<usize> {
        match self.repeat {
            None => (n == self.values).then_some(1),
            Some(Repeat { last, max }) => {
                let more = n.checked_sub(self.values)?;
                let groups = 1 + more / last;
                (more % last == 0 && groups <= max).then_some(groups)
            }
        }
    }
}

/// A call split by its form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call<'a> {
    pub keys: &'a [&'a [u8]],
    pub values: &'a [&'a [u8]],
}

/// A declared key of a form, by its place among the keys (`protocol::<verb>::<SLOT>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAt(pub usize);

impl KeyAt {
    /// The key given in `call` (split by the verb's form, so it is there).
    pub fn of<'a>(self, call: &Call<'a>) -> &'a [u8] {
        call.keys[self.0]
    }
}

/// A declared value of a form that has no grammar (any bytes), by its place among the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueAt(pub usize);

impl ValueAt {
    /// The value given in `call` (split by the verb's form, so it is there).
    pub fn of<'a>(self, call: &Call<'a>) -> &'a [u8] {
        call.values[self.0]
    }
}

/// Parses `numkeys`: decimal digits only, no sign, no leading zero (except `0` itself).
pub fn numkeys(arg: &[u8]) -> Option<usize> {
    canonical_digits(arg, 19)?;
    usize::try_from(decimal(arg)).ok()
}

/// The value of at most 19 ASCII digits (the caller checked them).
pub fn decimal(digits: &[u8]) -> u64 {
    digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0'))
}

/// Splits the arguments after the command name by `form`.
pub fn split<'a>(form: &Form, args: &'a [&'a [u8]]) -> Result<Call<'a>, Refusal> {
    let wrong_keys = || errors::wrong_keys(form.verb, form.syntax);
    let (first, rest) = args.split_first().ok_or_else(wrong_keys)?;
    let n = numkeys(first).ok_or_else(wrong_keys)?;
    if n > rest.len() || n != form.keys.len() {
        return Err(wrong_keys());
    }
    let (keys, values) = rest.split_at(n);
    if form.groups(values.len()).is_none() {
        return Err(errors::wrong_values(form.verb, form.syntax));
    }
    Ok(Call { keys, values })
}

/// `Some(())` when `arg` is 1..=`max` ASCII digits without a leading zero (a lone `0` passes).
pub fn canonical_digits(arg: &[u8], max: usize) -> Option<()> {
    let digits = !arg.is_empty() && arg.len() <= max && arg.iter().all(u8::is_ascii_digit);
    let canonical = arg.len() == 1 || arg.first() != Some(&b'0');
    (digits && canonical).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: Form = Form {
        verb: "ENQUEUE",
        syntax: "EMQ.ENQUEUE 2 <row> <pending> <id> <payload>",
        keys: &[Slot::Row, Slot::Key(b"pending")],
        anchor: 1,
        values: 2,
        class: Class::Admission,
        repeat: None,
    };
    const KEYS: &str =
        "ERR EMQ.ENQUEUE wrong number of keys: EMQ.ENQUEUE 2 <row> <pending> <id> <payload>";
    const VALUES: &str =
        "ERR EMQ.ENQUEUE wrong number of values: EMQ.ENQUEUE 2 <row> <pending> <id> <payload>";

    fn refusal(args: &[&[u8]]) -> String {
        let err = split(&FORM, args).unwrap_err();
        String::from_utf8(err.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn splits_keys_and_values() {
        let args: [&[u8]; 5] = [b"2", b"r", b"p", b"JOB1", b""];
        let call = split(&FORM, &args).unwrap();
        assert_eq!(call.keys, &[&b"r"[..], b"p"]);
        assert_eq!(call.values, &[&b"JOB1"[..], b""]);
    }

    #[test]
    fn wrong_number_of_keys() {
        let cases: [&[&[u8]]; 9] = [
            &[],
            &[b"1", b"r", b"p", b"JOB1", b"x"],
            &[b"3", b"r", b"p", b"JOB1", b"x"],
            &[b"9", b"r", b"p"],
            &[b"x", b"r", b"p", b"JOB1", b"x"],
            &[b"-2", b"r", b"p", b"JOB1", b"x"],
            &[b"+2", b"r", b"p", b"JOB1", b"x"],
            &[b"02", b"r", b"p", b"JOB1", b"x"],
            &[b"2", b"r"],
        ];
        for args in cases {
            assert_eq!(refusal(args), KEYS, "{args:?}");
        }
    }

    #[test]
    fn keys_are_counted_before_values() {
        let args: [&[u8]; 2] = [b"1", b"r"];
        assert_eq!(refusal(&args), KEYS);
    }

    #[test]
    fn wrong_number_of_values() {
        let cases: [&[&[u8]]; 3] = [
            &[b"2", b"r", b"p"],
            &[b"2", b"r", b"p", b"JOB1"],
            &[b"2", b"r", b"p", b"JOB1", b"x", b"y"],
        ];
        for args in cases {
            assert_eq!(refusal(args), VALUES, "{args:?}");
        }
    }

    #[test]
    fn repeating_values() {
        let form = Form {
            repeat: Some(Repeat { last: 2, max: 3 }),
            values: 3,
            ..FORM
        };
        let groups: Vec<Option<usize>> = (0..10).map(|n| form.groups(n)).collect();
        let want = [
            None,
            None,
            None,
            Some(1),
            None,
            Some(2),
            None,
            Some(3),
            None,
            None,
        ];
        assert_eq!(groups, want);
        assert_eq!(FORM.groups(2), Some(1));
        assert_eq!(FORM.groups(3), None);
    }

    #[test]
    fn numkeys_grammar() {
        assert_eq!(numkeys(b"0"), Some(0));
        assert_eq!(numkeys(b"3"), Some(3));
        assert_eq!(numkeys(b"12"), Some(12));
        assert_eq!(
            numkeys(b"9999999999999999999"),
            "9999999999999999999".parse().ok()
        );
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b"01",
            b"1.0",
            b" 1",
            b"1 ",
            b"99999999999999999999",
        ] {
            assert_eq!(numkeys(bad), None, "{bad:?}");
        }
    }
}

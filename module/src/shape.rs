//! The shape step: `<numkeys> <keys…> <values…>` against a verb's form, and value parsing.
//!
//! Pure byte functions. The count of keys is checked first, then the count of values; each
//! refusal names the verb's form as written in the protocol.

use crate::errors::{self, Refusal};

/// A verb's form: its token, its syntax as documented, and its exact counts.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    /// Upper-case verb token (`ENQUEUE`); the command is `EMQ.<token>`.
    pub verb: &'static str,
    /// The syntax as written in the protocol (`EMQ.ENQUEUE 2 <row> <pending> <id> <payload>`).
    pub syntax: &'static str,
    /// Number of declared keys.
    pub keys: usize,
    /// Number of values after the keys.
    pub values: usize,
}

/// A call split by its form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call<'a> {
    pub keys: &'a [&'a [u8]],
    pub values: &'a [&'a [u8]],
}

/// Parses `numkeys`: decimal digits only, no sign, no leading zero (except `0` itself).
pub fn numkeys(arg: &[u8]) -> Option<usize> {
    canonical_digits(arg, 19)?;
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// Splits the arguments after the command name by `form`.
pub fn split<'a>(form: &Form, args: &'a [&'a [u8]]) -> Result<Call<'a>, Refusal> {
    let wrong_keys = || errors::wrong_keys(form.verb, form.syntax);
    let (first, rest) = args.split_first().ok_or_else(wrong_keys)?;
    let n = numkeys(first).ok_or_else(wrong_keys)?;
    if n > rest.len() || n != form.keys {
        return Err(wrong_keys());
    }
    let (keys, values) = rest.split_at(n);
    if values.len() != form.values {
        return Err(errors::wrong_values(form.verb, form.syntax));
    }
    Ok(Call { keys, values })
}

/// A positive count of milliseconds: decimal digits only, no sign, no leading zero, at most 15
/// digits.
pub fn positive_ms(arg: &[u8]) -> Option<i64> {
    canonical_digits(arg, 15)?;
    if arg[0] == b'0' {
        return None;
    }
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// `Some(())` when `arg` is 1..=`max` ASCII digits without a leading zero (a lone `0` passes).
fn canonical_digits(arg: &[u8], max: usize) -> Option<()> {
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
        keys: 2,
        values: 2,
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
    fn numkeys_grammar() {
        assert_eq!(numkeys(b"0"), Some(0));
        assert_eq!(numkeys(b"3"), Some(3));
        assert_eq!(numkeys(b"12"), Some(12));
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

    #[test]
    fn lease_grammar() {
        assert_eq!(positive_ms(b"1"), Some(1));
        assert_eq!(positive_ms(b"30000"), Some(30000));
        assert_eq!(positive_ms(b"999999999999999"), Some(999_999_999_999_999));
        for bad in [
            &b""[..],
            b"0",
            b"00",
            b"01",
            b"-5",
            b"+5",
            b"5.0",
            b"1e3",
            b" 5",
            b"5 ",
            b"1000000000000000",
            b"\xff",
        ] {
            assert_eq!(positive_ms(bad), None, "{bad:?}");
        }
    }
}

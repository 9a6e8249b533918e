//! Every reply string the module sends, in one place.
//!
//! A [`Refusal`] is one error line, code first (`ERR …`, `EMQWIRE …`, `WRONGTYPE …`), held as
//! bytes so that a value read from the keyspace (a foreign brand) is printed as it is.

use std::ffi::CString;
use valkey_module::ValkeyValue;

/// The module's brand (the data's `brands.wire6`); also the wire it reports in `EMQ.VERSION`.
pub use crate::protocol::WIRE6 as BRAND;

/// The server's own wrong-type text.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// The server's own text for a write on a replica.
pub const READONLY: &str = "READONLY You can't write against a read only replica.";

/// The server's own text for a `deny-oom` command over `maxmemory`.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// One error reply: the whole line without the leading `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(Vec<u8>);

/// What a verb answers: a value, or one refusal.
pub type Reply = Result<ValkeyValue, Refusal>;

impl Refusal {
    fn text(line: impl Into<Vec<u8>>) -> Self {
        Refusal(line.into())
    }

    /// An error reply produced by the server for an inner call (`NOPERM …`, `WRONGTYPE …`),
    /// passed to the caller unchanged.
    pub fn passthrough(line: &[u8]) -> Self {
        Refusal(line.to_vec())
    }

    /// The error line as sent, without the leading `-`.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The line as it can travel in one RESP error: CR, LF and NUL become spaces.
    pub fn wire_line(&self) -> CString {
        let line = self
            .0
            .iter()
            .map(|&b| {
                if matches!(b, b'\r' | b'\n' | 0) {
                    b' '
                } else {
                    b
                }
            })
            .collect::<Vec<u8>>();
        CString::new(line).expect("NUL bytes were replaced")
    }
}

/// `ERR wrong number of arguments for '<command>' command` (a verb that takes no arguments).
pub fn arity(command: &str) -> Refusal {
    Refusal::text(format!(
        "ERR wrong number of arguments for '{command}' command"
    ))
}

/// `ERR echomq module bug: <what>; report it` — an invariant a verb broke, answered as an error
/// rather than a panic (a panic inside a command aborts the server).
pub fn bug(what: &str) -> Refusal {
    Refusal::text(format!("ERR echomq module bug: {what}; report it"))
}

/// `ERR EMQ.<VERB> wrong number of keys: <form>`
pub fn wrong_keys(verb: &str, form: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} wrong number of keys: {form}"))
}

/// `ERR EMQ.<VERB> wrong number of values: <form>`
pub fn wrong_values(verb: &str, form: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} wrong number of values: {form}"))
}

/// `ERR EMQ.<VERB> keys do not match the wire-4 layout`
pub fn layout(verb: &str) -> Refusal {
    Refusal::text(format!(
        "ERR EMQ.{verb} keys do not match the wire-4 layout"
    ))
}

/// `EMQWIRE expected <wire-6 brand> found <value>`; an absent key prints as `(nil)`.
pub fn emqwire(found: Option<&[u8]>) -> Refusal {
    let mut line = format!("EMQWIRE expected {BRAND} found ").into_bytes();
    line.extend_from_slice(found.unwrap_or(b"(nil)"));
    Refusal(line)
}

/// The server's text for a command whose caller may not access one of its keys (what `GET`
/// answers such a user).
pub const NOPERM_KEY: &str = "NOPERM No permissions to access a key";

/// The server's `NOPERM` text for a key the caller may not access.
pub fn noperm_key() -> Refusal {
    Refusal::text(NOPERM_KEY)
}

/// The server's `WRONGTYPE` text.
pub fn wrongtype() -> Refusal {
    Refusal::text(WRONGTYPE)
}

/// The server's `READONLY` text (write guard: a replica).
pub fn readonly() -> Refusal {
    Refusal::text(READONLY)
}

/// The server's `OOM` text (write guard: over `maxmemory`).
pub fn oom() -> Refusal {
    Refusal::text(OOM)
}

/// The server's `HINCRBY` text for a field that does not hold an integer.
pub fn not_an_integer() -> Refusal {
    Refusal::text("ERR hash value is not an integer")
}

/// The server's `HINCRBY` text for a sum outside 64 bits.
pub fn overflow() -> Refusal {
    Refusal::text("ERR increment or decrement would overflow")
}

/// `ERR EMQ.<VERB> id must start with JOB`
pub fn not_job_id(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} id must start with JOB"))
}

/// `ERR EMQ.<VERB> <name> must be <rule>` (a value outside its grammar).
pub fn value(verb: &str, name: &str, rule: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} {name} must be {rule}"))
}

/// `ERR EMQ.<VERB> job not found` (row gate: the row is not a hash).
pub fn job_not_found(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} job not found"))
}

/// `ERR EMQ.<VERB> job is not active` (lease gate: state or `active` membership).
pub fn not_active(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} job is not active"))
}

/// `ERR EMQ.<VERB> stale lease token` (lease gate: `attempts` differs from the token).
pub fn stale_token(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} stale lease token"))
}

/// `ERR EMQ.<VERB> job is not dead` (`RETRY`).
pub fn not_dead(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} job is not dead"))
}

/// `ERR EMQ.<VERB> job is active` (`REMOVE`).
pub fn job_active(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} job is active"))
}

/// `ERR EMQ.<VERB> job is not scheduled` (`EXPEDITE`).
pub fn not_scheduled(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} job is not scheduled"))
}

/// `ERR EMQ.<VERB> state must be completed or dead` (`CLEAN`).
pub fn finished_state(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} state must be completed or dead"))
}

/// `ERR EMQ.<VERB> force must be 0 or 1` (`OBLITERATE`).
pub fn force_flag(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} force must be 0 or 1"))
}

/// `ERR EMQ.<VERB> queue has active jobs` (`OBLITERATE` without force).
pub fn queue_active(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} queue has active jobs"))
}

/// `ERR EMQ.<VERB> pending head is already active` (an id in both sets: outside writes).
pub fn head_already_active(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} pending head is already active"))
}

/// `ERR EMQ.<VERB> job row has no integer attempts` (a row that no transition wrote).
pub fn bad_attempts(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} job row has no integer attempts"))
}

/// `ERR EMQ.<VERB> scope must be queue, default, group or ungroup` (`LIMIT`).
pub fn limit_scope(verb: &str) -> Refusal {
    Refusal::text(format!(
        "ERR EMQ.{verb} scope must be queue, default, group or ungroup"
    ))
}

/// `ERR EMQ.<VERB> group must be empty for scope <scope>` (`LIMIT`).
pub fn group_not_empty(verb: &str, scope: &[u8]) -> Refusal {
    let mut line = format!("ERR EMQ.{verb} group must be empty for scope ").into_bytes();
    line.extend_from_slice(scope);
    Refusal::text(line)
}

/// `ERR EMQ.<VERB> group must be 1-255 bytes without control characters` (`LIMIT`).
pub fn group_label(verb: &str) -> Refusal {
    Refusal::text(format!(
        "ERR EMQ.{verb} group must be 1-255 bytes without control characters"
    ))
}

/// `ERR EMQ.<VERB> rate max and duration must both be 0 or both positive` (`LIMIT`).
pub fn rate_pair(verb: &str) -> Refusal {
    Refusal::text(format!(
        "ERR EMQ.{verb} rate max and duration must both be 0 or both positive"
    ))
}

/// `ERR EMQ.<VERB> child id must start with JOB` (`SETTLE`).
pub fn child_not_job_id(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} child id must start with JOB"))
}

/// `ERR EMQ.<VERB> child queue must be a queue name` (`SETTLE`).
pub fn child_queue(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} child queue must be a queue name"))
}

/// `ERR EMQ.<VERB> outcome must be completed or failed` (`SETTLE`).
pub fn outcome(verb: &str) -> Refusal {
    Refusal::text(format!(
        "ERR EMQ.{verb} outcome must be completed or failed"
    ))
}

/// `ERR EMQ.<VERB> write check failed` — a write did not do what the reads predicted (a bug).
pub fn write_check(verb: &str) -> Refusal {
    Refusal::text(format!("ERR EMQ.{verb} write check failed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(r: Refusal) -> String {
        String::from_utf8(r.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn texts_are_exact() {
        let form = "EMQ.ENQUEUE 2 <row> <pending> <id> <payload>";
        let table: [(Refusal, &str); 22] = [
            (wrong_keys("ENQUEUE", form), "ERR EMQ.ENQUEUE wrong number of keys: EMQ.ENQUEUE 2 <row> <pending> <id> <payload>"),
            (wrong_values("ENQUEUE", form), "ERR EMQ.ENQUEUE wrong number of values: EMQ.ENQUEUE 2 <row> <pending> <id> <payload>"),
            (layout("CLAIM"), "ERR EMQ.CLAIM keys do not match the wire-4 layout"),
            (wrongtype(), "WRONGTYPE Operation against a key holding the wrong kind of value"),
            (readonly(), "READONLY You can't write against a read only replica."),
            (oom(), "OOM command not allowed when used memory > 'maxmemory'."),
            (not_job_id("ENQUEUE"), "ERR EMQ.ENQUEUE id must start with JOB"),
            (value("CLAIM", "lease", "a positive integer of milliseconds"), "ERR EMQ.CLAIM lease must be a positive integer of milliseconds"),
            (job_not_found("EXTEND"), "ERR EMQ.EXTEND job not found"),
            (not_active("COMPLETE"), "ERR EMQ.COMPLETE job is not active"),
            (stale_token("FAIL"), "ERR EMQ.FAIL stale lease token"),
            (not_dead("RETRY"), "ERR EMQ.RETRY job is not dead"),
            (job_active("REMOVE"), "ERR EMQ.REMOVE job is active"),
            (not_an_integer(), "ERR hash value is not an integer"),
            (overflow(), "ERR increment or decrement would overflow"),
            (head_already_active("CLAIM"), "ERR EMQ.CLAIM pending head is already active"),
            (write_check("CLAIM"), "ERR EMQ.CLAIM write check failed"),
            (not_scheduled("EXPEDITE"), "ERR EMQ.EXPEDITE job is not scheduled"),
            (finished_state("CLEAN"), "ERR EMQ.CLEAN state must be completed or dead"),
            (force_flag("OBLITERATE"), "ERR EMQ.OBLITERATE force must be 0 or 1"),
            (queue_active("OBLITERATE"), "ERR EMQ.OBLITERATE queue has active jobs"),
            (arity("emq.version"), "ERR wrong number of arguments for 'emq.version' command"),
        ];
        for (refusal, text) in table {
            assert_eq!(line(refusal), text);
        }
    }

    /// `EMQWIRE expected <the module's brand, from the data> found <found>`.
    fn emqwire_text(found: &[u8]) -> Vec<u8> {
        [format!("EMQWIRE expected {BRAND} found ").as_bytes(), found].concat()
    }

    #[test]
    fn emqwire_names_the_module_brand_and_what_was_found() {
        assert_eq!(emqwire(None).as_bytes(), emqwire_text(b"(nil)"));
        let scripts = crate::protocol::WIRE4.as_bytes();
        assert_eq!(emqwire(Some(scripts)).as_bytes(), emqwire_text(scripts));
    }

    #[test]
    fn found_value_keeps_its_bytes() {
        let r = emqwire(Some(b"x\xff\x00y"));
        assert_eq!(r.as_bytes(), emqwire_text(b"x\xff\x00y"));
        assert_eq!(r.wire_line().as_bytes(), emqwire_text(b"x\xff y"));
    }

    #[test]
    fn wire_line_has_no_line_breaks() {
        let r = emqwire(Some(b"a\r\nb"));
        assert_eq!(r.wire_line().as_bytes(), emqwire_text(b"a  b"));
    }

    #[test]
    fn passthrough_is_unchanged() {
        let text = b"NOPERM User u has no permissions to access the 'k' key";
        assert_eq!(Refusal::passthrough(text).as_bytes(), text);
    }
}

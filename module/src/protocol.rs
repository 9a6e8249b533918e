//! The protocol as the module runs it, made from the protocol data (`protocol/protocol.json`,
//! `protocol/verbs/<verb>.json`) by `build.rs`: the job-core tokens in protocol order, the
//! brands, and per verb a module `protocol::<verb>` holding its
//! [`Form`](crate::shape::Form) and one constant per declared key and value, so that a handler
//! names what it takes as the protocol does (`claim::PENDING.of(&call)`,
//! `claim::LEASE_MS.read(&call)?`).

include!(concat!(env!("OUT_DIR"), "/protocol.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::BASE;

    /// The placeholder a slot is written as in a form's syntax.
    fn placeholder(slot: &Slot) -> String {
        match slot {
            Slot::Row => "<row>".to_owned(),
            Slot::Key(kind) if *kind == BASE => "<base>".to_owned(),
            Slot::Key(kind) => format!("<{}>", String::from_utf8_lossy(kind)),
            Slot::Version => String::from_utf8_lossy(VERSION_KEY).into_owned(),
        }
    }

    #[test]
    fn every_verb_has_one_form() {
        let tokens: Vec<&str> = JOB_CORE_FORMS.iter().map(|form| form.verb).collect();
        assert_eq!(tokens, JOB_CORE);
    }

    #[test]
    fn forms_match_their_counts_and_slots() {
        for form in JOB_CORE_FORMS.into_iter().chain([install::FORM]) {
            // A repeating form writes its group once more in brackets: `[<id> <token> ...]`.
            let fixed = form.syntax.split(" [").next().unwrap();
            assert_eq!(
                form.repeat.is_some(),
                fixed != form.syntax,
                "{}",
                form.syntax
            );
            let words: Vec<&str> = fixed.split(' ').collect();
            assert_eq!(words[0], format!("EMQ.{}", form.verb));
            assert_eq!(words[1], form.keys.len().to_string(), "{}", form.syntax);
            assert_eq!(
                words.len(),
                2 + form.keys.len() + form.values,
                "{}",
                form.syntax
            );
            for (slot, word) in form.keys.iter().zip(&words[2..]) {
                assert_eq!(placeholder(slot), *word, "{}", form.syntax);
            }
            for word in &words[2 + form.keys.len()..] {
                assert!(word.starts_with('<') && word.ends_with('>'), "{word}");
            }
            assert!(form.anchor < form.keys.len());
            if form.keys.contains(&Slot::Row) {
                assert_eq!(words[2 + form.keys.len()], "<id>", "{}", form.syntax);
            }
        }
    }

    /// The forms made from the data are the forms module 0.2.0 declared by hand (its `Form`
    /// consts, dumped with `{:?}` before they were removed), in protocol order, then `INSTALL`;
    /// the verbs added since (`LANES`, `EVENTS`, `PROGRESS`, `LOG`, then the operator's
    /// `EXPEDITE`, `CLEAN`, `DRAIN`, `OBLITERATE`) follow 0.2.0's job core, and `ADD` has taken
    /// eight more values since (`<trace>`, then its extras `<group> <key> <key_ttl> <timeout>
    /// <parent> <name> <backoff>`, last), and `FAIL` one (`<stack>`, last).
    #[test]
    fn forms_equal_the_handwritten_ones() {
        let dump = include_str!("../tests/forms-0.2.0.txt")
            .replace(
                "<delay> <max_attempts>\", keys:",
                "<delay> <max_attempts> <trace> <group> <key> <key_ttl> <timeout> <parent> <name> \
                 <backoff>\", keys:",
            )
            .replace(
                "values: 5, class: Admission",
                "values: 13, class: Admission",
            )
            .replace(
                "<max_attempts> <keep>\", keys: [Key([97, 99, 116, 105, 118, 101]), Key([112, 101, 110, 100, 105, 110, 103]), Key([115, 99, 104, 101, 100, 117, 108, 101]), Key([100, 101, 97, 100]), Key([])], anchor: 0, values: 6,",
                "<max_attempts> <keep> <stack>\", keys: [Key([97, 99, 116, 105, 118, 101]), Key([112, 101, 110, 100, 105, 110, 103]), Key([115, 99, 104, 101, 100, 117, 108, 101]), Key([100, 101, 97, 100]), Key([])], anchor: 0, values: 7,",
            );
        let dump = dump.as_str();
        let before: Vec<&str> = dump.lines().filter(|l| l.starts_with("Form ")).collect();
        let old = before.len() - 1;
        let now: Vec<String> = JOB_CORE_FORMS[..old]
            .iter()
            .chain([&install::FORM])
            .map(|form| format!("{form:?}").replace(", repeat: None", ""))
            .collect();
        assert_eq!(now, before);
        let tokens = format!("{:?}", &JOB_CORE[..old]);
        assert_eq!(before_line(dump), tokens);
        let since = &JOB_CORE[old..];
        assert_eq!(since[..4], ["LANES", "EVENTS", "PROGRESS", "LOG"]);
        for verb in ["EXPEDITE", "CLEAN", "DRAIN", "OBLITERATE"] {
            assert!(since.contains(&verb), "{verb}");
        }
    }

    /// The last line of the dump: the job-core token list 0.2.0 reported.
    fn before_line(dump: &str) -> String {
        dump.lines().rfind(|l| !l.is_empty()).unwrap().to_owned()
    }

    #[test]
    fn anchors() {
        let anchor = |verb: &str| {
            let form = JOB_CORE_FORMS.into_iter().find(|f| f.verb == verb).unwrap();
            form.keys[form.anchor]
        };
        assert_eq!(anchor("ENQUEUE"), Slot::Key(b"pending"));
        assert_eq!(anchor("ADD"), Slot::Key(b"pending"));
        assert_eq!(anchor("CLAIM"), Slot::Key(b"pending"));
        assert_eq!(anchor("EXTEND"), Slot::Key(b"active"));
        assert_eq!(anchor("COMPLETE"), Slot::Key(b"active"));
        assert_eq!(anchor("FAIL"), Slot::Key(b"active"));
        assert_eq!(anchor("RESCHEDULE"), Slot::Key(b"active"));
        assert_eq!(anchor("REQUEUE"), Slot::Key(b"active"));
        assert_eq!(anchor("RETRY"), Slot::Key(b"dead"));
        assert_eq!(anchor("PROMOTE"), Slot::Key(b"schedule"));
        assert_eq!(anchor("REAP"), Slot::Key(b"active"));
        assert_eq!(anchor("REMOVE"), Slot::Key(b"pending"));
        assert_eq!(anchor("PAUSE"), Slot::Key(b"meta"));
        assert_eq!(anchor("RESUME"), Slot::Key(b"meta"));
        assert_eq!(anchor("EXPEDITE"), Slot::Key(b"schedule"));
        assert_eq!(anchor("CLEAN"), Slot::Key(b"done"));
        assert_eq!(anchor("DRAIN"), Slot::Key(b"pending"));
        assert_eq!(anchor("OBLITERATE"), Slot::Key(b"pending"));
    }
}

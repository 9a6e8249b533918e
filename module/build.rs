//! Makes the module's protocol tables from the protocol data (`../protocol/`), the contract
//! written once:
//!
//! * `$OUT_DIR/protocol.rs`, included by `src/protocol.rs`: the job-core verb tokens (and the
//!   extension tokens `EMQ.VERSION` lists beside them) in
//!   `job_core` order, the brands, and for each verb a module
//!   (`protocol::<verb>`) with its `FORM` (token, syntax, keys, anchor, value count, class) and
//!   one constant per declared key (`KeyAt`) and value (`ValueAt`, or `Number` when it has a
//!   numeric grammar, `Text` when a text grammar: its refusal name and rule);
//! * `$OUT_DIR/grammars.rs`, included by `src/values.rs`: each grammar's rule text (numeric
//!   grammars on `Grammar`, text grammars — `"text": true` — on `TextGrammar`), and each text
//!   grammar's size bound (`max_bytes`, on `TextGrammar::max_bytes`);
//! * `$OUT_DIR/commands.rs`, included by `src/lib.rs`: the registration table — per command its
//!   name, flags (from its class), summary, arity, handler (`verbs::<family>::<verb>`) and one
//!   key spec per declared key (position and flags).
//!
//! Data the server or the module could not take fails the build with a message naming the file
//! and the field: an unknown slot, flag, class or grammar, no anchor or two, an anchor or a base
//! marked NOT_KEY, a key spec without
//! exactly one of RO/RW/OW/RM or with two of INSERT/DELETE/UPDATE (the module API refuses both),
//! a job-core list naming a verb not described (or one twice). A handler that does not exist
//! fails compilation.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

type Res<T> = Result<T, String>;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dir = manifest.join("..").join("protocol");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    match load(&dir) {
        Ok((protocol, verbs)) => {
            write(&out.join("protocol.rs"), &protocol_rs(&protocol, &verbs));
            write(&out.join("commands.rs"), &commands_rs(&protocol, &verbs));
            write(&out.join("grammars.rs"), &grammars_rs(&protocol));
        }
        Err(e) => {
            eprintln!(
                "error: the protocol data in {} is inconsistent: {e}",
                dir.display()
            );
            std::process::exit(1);
        }
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// What a key slot of `protocol.json` names.
#[derive(Clone, PartialEq)]
enum Slot {
    /// `emq:{q}:<type>`; the base `emq:{q}:` has the empty type.
    Key(String),
    /// `emq:{q}:job:<id>`.
    Row,
    /// The brand key `{emq}:version` (no queue).
    Version,
}

struct Protocol {
    job_core: Vec<String>,
    wire4: String,
    wire6: String,
    version_key: String,
    /// Class name → command flags.
    classes: BTreeMap<String, String>,
    /// Grammar name → rule text, and whether the grammar is text (not a number).
    grammars: BTreeMap<String, (String, bool)>,
    /// Text grammar name → the most bytes a value in it may have (`max_bytes`), when bounded.
    bounds: BTreeMap<String, u64>,
    slots: BTreeMap<String, Slot>,
}

struct Key {
    slot: String,
    anchor: bool,
    flags: Vec<String>,
}

struct Val {
    slot: String,
    grammar: Option<String>,
    name: Option<String>,
}

struct Verb {
    verb: String,
    /// One of the job-core verbs (`job_core` lists exactly these).
    is_core: bool,
    /// Listed by `EMQ.VERSION` under `extensions` (a capability beside the job core).
    extension: bool,
    /// The command may wait inside the server (command flag `blocking`).
    blocking: bool,
    summary: String,
    family: String,
    class: String,
    keys: Vec<Key>,
    values: Vec<Val>,
}

/// The key-spec flags of the data, and the crate's `KeySpecFlags` constant for each.
const KEY_FLAGS: [(&str, &str); 9] = [
    ("RO", "READ_ONLY"),
    ("RW", "READ_WRITE"),
    ("OW", "OVERWRITE"),
    ("RM", "REMOVE"),
    ("ACCESS", "ACCESS"),
    ("UPDATE", "UPDATE"),
    ("INSERT", "INSERT"),
    ("DELETE", "DELETE"),
    ("NOT_KEY", "NOT_KEY"),
];

/// The command flags a class may give (the server refuses any other at load).
const COMMAND_FLAGS: [&str; 8] = [
    "write",
    "readonly",
    "deny-oom",
    "fast",
    "admin",
    "allow-stale",
    "no-cluster",
    "allow-busy",
];

/// The queue-key templates: `emq:{q}:<type>`, and the row `emq:{q}:job:<id>`.
const QUEUE: &str = "emq:{q}:";
const ROW: &str = "emq:{q}:job:<id>";

fn load(dir: &Path) -> Res<(Protocol, Vec<Verb>)> {
    let protocol = read_protocol(&dir.join("protocol.json"))?;
    let mut verbs = Vec::new();
    let verbs_dir = dir.join("verbs");
    let entries =
        std::fs::read_dir(&verbs_dir).map_err(|e| format!("{}: {e}", verbs_dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    for path in paths {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let verb = read_verb(&path, &protocol).map_err(|e| format!("verbs/{name}.json: {e}"))?;
        if verb.verb.to_lowercase() != name {
            return Err(format!(
                "verbs/{name}.json: verb {} is not named after its file",
                verb.verb
            ));
        }
        verbs.push(verb);
    }
    let core: BTreeSet<&str> = verbs
        .iter()
        .filter(|v| v.is_core)
        .map(|v| v.verb.as_str())
        .collect();
    let listed: BTreeSet<&str> = protocol.job_core.iter().map(String::as_str).collect();
    if core != listed || listed.len() != protocol.job_core.len() {
        return Err(format!(
            "protocol.json job_core {:?} names a verb not described, or one twice (described: {:?})",
            protocol.job_core, core
        ));
    }
    Ok((protocol, verbs))
}

fn read_json(path: &Path) -> Res<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn field<'v>(v: &'v Value, name: &str) -> Res<&'v Value> {
    v.get(name).ok_or_else(|| format!("no field `{name}`"))
}

fn text(v: &Value, name: &str) -> Res<String> {
    let s = field(v, name)?
        .as_str()
        .ok_or_else(|| format!("`{name}` is not a string"))?;
    if s.contains('\0') {
        return Err(format!("`{name}` holds a NUL byte"));
    }
    Ok(s.to_owned())
}

fn list<'v>(v: &'v Value, name: &str) -> Res<&'v Vec<Value>> {
    field(v, name)?
        .as_array()
        .ok_or_else(|| format!("`{name}` is not an array"))
}

fn object<'v>(v: &'v Value, name: &str) -> Res<&'v serde_json::Map<String, Value>> {
    field(v, name)?
        .as_object()
        .ok_or_else(|| format!("`{name}` is not an object"))
}

fn read_protocol(path: &Path) -> Res<Protocol> {
    println!("cargo:rerun-if-changed={}", path.display());
    let p = read_json(path).map_err(|e| format!("protocol.json: {e}"))?;
    let at = |e: String| format!("protocol.json: {e}");
    let job_core = list(&p, "job_core")
        .map_err(at)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| at("`job_core` holds a non-string".into()))?;
    let brands = field(&p, "brands").map_err(at)?;
    let version_key = text(brands, "key").map_err(at)?;
    let mut classes = BTreeMap::new();
    for (name, class) in object(&p, "classes").map_err(at)? {
        let flags = text(class, "flags").map_err(|e| at(format!("class {name}: {e}")))?;
        if let Some(bad) = flags.split(' ').find(|f| !COMMAND_FLAGS.contains(f)) {
            return Err(at(format!("class {name}: unknown command flag `{bad}`")));
        }
        classes.insert(name.clone(), flags);
    }
    let mut grammars = BTreeMap::new();
    let mut bounds = BTreeMap::new();
    for (name, grammar) in object(&p, "grammars").map_err(at)? {
        let rule = text(grammar, "rule").map_err(|e| at(format!("grammar {name}: {e}")))?;
        let is_text = match grammar.get("text") {
            None => false,
            Some(flag) => flag
                .as_bool()
                .ok_or_else(|| at(format!("grammar {name}: `text` is not a boolean")))?,
        };
        if let Some(max) = grammar.get("max_bytes") {
            let max = max.as_u64().filter(|&n| n > 0 && is_text).ok_or_else(|| {
                at(format!(
                    "grammar {name}: `max_bytes` is not a positive integer on a text grammar"
                ))
            })?;
            bounds.insert(name.clone(), max);
        }
        grammars.insert(name.clone(), (rule, is_text));
    }
    let mut slots = BTreeMap::new();
    for (name, template) in object(&p, "key_slots").map_err(at)? {
        let template = template
            .as_str()
            .ok_or_else(|| at(format!("key slot {name} is not a string")))?;
        let slot = if template == version_key {
            Slot::Version
        } else if template == ROW {
            Slot::Row
        } else if let Some(kind) = template.strip_prefix(QUEUE).filter(|k| is_kind(k)) {
            Slot::Key(kind.to_owned())
        } else {
            return Err(at(format!(
                "key slot {name}: `{template}` is none of `{QUEUE}<type>`, `{ROW}`, `{version_key}`"
            )));
        };
        slots.insert(name.clone(), slot);
    }
    for flag in list(&p, "key_flags").map_err(at)? {
        let flag = flag.as_str().unwrap_or_default();
        if !KEY_FLAGS.iter().any(|(name, _)| *name == flag) {
            return Err(at(format!("key flag `{flag}` is unknown to the module")));
        }
    }
    Ok(Protocol {
        job_core,
        wire4: text(brands, "wire4").map_err(at)?,
        wire6: text(brands, "wire6").map_err(at)?,
        version_key,
        classes,
        grammars,
        bounds,
        slots,
    })
}

/// A key type: lower-case letters only (the base has none).
fn is_kind(kind: &str) -> bool {
    kind.bytes().all(|b| b.is_ascii_lowercase())
}

/// A slot or family name that is also a Rust identifier: `[a-z][a-z0-9_]*`.
fn is_ident(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn read_verb(path: &Path, protocol: &Protocol) -> Res<Verb> {
    let v = read_json(path)?;
    let verb = text(&v, "verb")?;
    if verb.is_empty() || !verb.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("verb `{verb}` is not upper-case letters"));
    }
    if v.get("core").is_some() {
        return Err(
            "job-core membership is stated once, in protocol.json `job_core`: drop `core`".into(),
        );
    }
    let core = protocol.job_core.contains(&verb);
    let flag = |name: &str| -> Res<bool> {
        match v.get(name) {
            None => Ok(false),
            Some(b) => b
                .as_bool()
                .ok_or_else(|| format!("`{name}` is not a boolean")),
        }
    };
    let (extension, blocking) = (flag("extension")?, flag("blocking")?);
    if extension && core {
        return Err("a job-core verb is no extension".into());
    }
    let family = text(&v, "family")?;
    if !is_ident(&family) {
        return Err(format!("family `{family}` is not a module name"));
    }
    let class = text(&v, "class")?;
    if !protocol.classes.contains_key(&class) {
        return Err(format!("unknown class `{class}`"));
    }
    let mut keys = Vec::new();
    for (i, key) in list(&v, "keys")?.iter().enumerate() {
        let at = |e: String| format!("keys[{i}]: {e}");
        let slot = text(key, "slot").map_err(at)?;
        if !protocol.slots.contains_key(&slot) {
            return Err(at(format!("unknown slot `{slot}`")));
        }
        let flags = list(key, "flags")
            .map_err(at)?
            .iter()
            .map(|f| f.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| at("a flag is not a string".into()))?;
        check_key_flags(&flags).map_err(at)?;
        let anchor = key.get("anchor").and_then(Value::as_bool).unwrap_or(false);
        if anchor && flags.iter().any(|f| f == "NOT_KEY") {
            return Err(at(
                "the anchor is NOT_KEY: cluster routing must see it".into()
            ));
        }
        let base = protocol.slots[&slot] == Slot::Key(String::new());
        if base && flags.iter().any(|f| f == "NOT_KEY") {
            return Err(at(
                "the base is NOT_KEY: ACL would skip it, and its check is the only \
                 one that reaches the keys derived from it (rows, meta)"
                    .into(),
            ));
        }
        keys.push(Key {
            slot,
            anchor,
            flags,
        });
    }
    let anchors = keys.iter().filter(|k| k.anchor).count();
    if !keys.is_empty() && anchors != 1 {
        return Err(format!(
            "{anchors} anchors; a verb with keys has exactly one"
        ));
    }
    let mut values = Vec::new();
    for (i, value) in list(&v, "values")?.iter().enumerate() {
        let at = |e: String| format!("values[{i}]: {e}");
        let slot = text(value, "slot").map_err(at)?;
        if !is_ident(&slot) {
            return Err(at(format!("slot `{slot}` is not a name")));
        }
        let grammar = value
            .get("grammar")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let name = value.get("name").and_then(Value::as_str).map(str::to_owned);
        if let Some(g) = &grammar {
            if !protocol.grammars.contains_key(g) {
                return Err(at(format!("unknown grammar `{g}`")));
            }
        }
        if grammar.is_some() != name.is_some() {
            return Err(at(
                "a value has a grammar exactly when it has a refusal name".into(),
            ));
        }
        values.push(Val {
            slot,
            grammar,
            name,
        });
    }
    let mut names = BTreeSet::new();
    for slot in keys
        .iter()
        .map(|k| &k.slot)
        .chain(values.iter().map(|v| &v.slot))
    {
        if !names.insert(slot.as_str()) {
            return Err(format!("slot `{slot}` declared twice"));
        }
    }
    let takes_row = keys.iter().any(|k| protocol.slots[&k.slot] == Slot::Row);
    if takes_row && values.first().map(|v| v.slot.as_str()) != Some("id") {
        return Err("a verb that declares the row takes the id as its first value".into());
    }
    Ok(Verb {
        summary: text(&v, "summary")?,
        verb,
        is_core: core,
        extension,
        blocking,
        family,
        class,
        keys,
        values,
    })
}

/// The module API's rules for one key spec: exactly one of RO/RW/OW/RM; at most one of
/// INSERT/DELETE/UPDATE; every flag known.
fn check_key_flags(flags: &[String]) -> Res<()> {
    if let Some(bad) = flags
        .iter()
        .find(|f| !KEY_FLAGS.iter().any(|(n, _)| n == f))
    {
        return Err(format!("unknown key flag `{bad}`"));
    }
    let count = |group: &[&str]| flags.iter().filter(|f| group.contains(&f.as_str())).count();
    if count(&["RO", "RW", "OW", "RM"]) != 1 {
        return Err(format!(
            "flags {flags:?}: a module key spec needs exactly one of RO, RW, OW, RM"
        ));
    }
    if count(&["INSERT", "DELETE", "UPDATE"]) > 1 {
        return Err(format!(
            "flags {flags:?}: INSERT, DELETE and UPDATE are mutually exclusive (a write that is \
             not only an insert or only a delete is UPDATE)"
        ));
    }
    Ok(())
}

/// `s` as a Rust string literal (`"…"`; also valid inside `b` and `c` literals when ASCII).
fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// `max_attempts` → `MaxAttempts`.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The verbs in registration order: the job core in `job_core` order, then the others by name.
fn ordered<'v>(protocol: &Protocol, verbs: &'v [Verb]) -> Vec<&'v Verb> {
    let mut out: Vec<&Verb> = protocol
        .job_core
        .iter()
        .filter_map(|token| verbs.iter().find(|v| &v.verb == token))
        .collect();
    out.extend(verbs.iter().filter(|v| !v.is_core));
    out
}

/// Whether a verb takes `numkeys` (and so has a form): it declares a key or a value.
fn has_form(verb: &Verb) -> bool {
    !verb.keys.is_empty() || !verb.values.is_empty()
}

/// The form's syntax as the protocol writes it: `EMQ.<VERB> <n> <keys…> <values…>`, a fixed
/// key (the brand key) written as itself.
fn syntax(protocol: &Protocol, verb: &Verb) -> String {
    let mut words = vec![format!("EMQ.{}", verb.verb), verb.keys.len().to_string()];
    for key in &verb.keys {
        words.push(match &protocol.slots[&key.slot] {
            Slot::Version => protocol.version_key.clone(),
            _ => format!("<{}>", key.slot),
        });
    }
    words.extend(verb.values.iter().map(|v| format!("<{}>", v.slot)));
    words.join(" ")
}

fn slot_rs(slot: &Slot) -> String {
    match slot {
        Slot::Key(kind) => format!("Slot::Key(b{})", lit(kind)),
        Slot::Row => "Slot::Row".to_owned(),
        Slot::Version => "Slot::Version".to_owned(),
    }
}

fn protocol_rs(protocol: &Protocol, verbs: &[Verb]) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "// @generated by module/build.rs from protocol/protocol.json and protocol/verbs/*.json.\n\
         // Do not edit: change the protocol data.\n\n\
         use crate::guard::Class;\n\
         use crate::shape::{{Form, KeyAt, Slot, ValueAt}};\n\
         use crate::values::{{Grammar, Number, Text, TextGrammar}};\n"
    );
    let core = &protocol.job_core;
    let _ = writeln!(
        w,
        "/// The job-core verb tokens in protocol order (what `EMQ.VERSION` lists).\n\
         pub const JOB_CORE: [&str; {}] = [{}];\n",
        core.len(),
        core.iter().map(|t| lit(t)).collect::<Vec<_>>().join(", ")
    );
    let extensions: Vec<String> = verbs
        .iter()
        .filter(|v| v.extension)
        .map(|v| lit(&v.verb))
        .collect();
    let _ = writeln!(
        w,
        "/// The extension verb tokens (what `EMQ.VERSION` lists under `extensions`), by name.\n\
         pub const EXTENSIONS: [&str; {}] = [{}];\n",
        extensions.len(),
        extensions.join(", ")
    );
    let _ = writeln!(
        w,
        "/// The job-core forms, in protocol order.\n\
         pub const JOB_CORE_FORMS: [Form; {}] = [{}];\n",
        core.len(),
        core.iter()
            .map(|t| format!("{}::FORM", t.to_lowercase()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        w,
        "/// The scripts' brand (wire 4).\npub const WIRE4: &str = {};\n\
         /// The module's brand (wire 6).\npub const WIRE6: &str = {};\n\
         /// The key that holds a node's brand.\npub const VERSION_KEY: &[u8] = b{};\n",
        lit(&protocol.wire4),
        lit(&protocol.wire6),
        lit(&protocol.version_key)
    );
    for verb in ordered(protocol, verbs) {
        verb_rs(w, protocol, verb);
    }
    s
}

fn grammars_rs(protocol: &Protocol) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "// @generated by module/build.rs from protocol/protocol.json. Do not edit: change the\n\
         // protocol data.\n"
    );
    for (kind, text) in [("Grammar", false), ("TextGrammar", true)] {
        let _ = writeln!(
            w,
            "impl {kind} {{\n    \
             /// The rule text a refusal names: `ERR EMQ.<VERB> <name> must be <rule>`.\n    \
             pub const fn rule(self) -> &'static str {{\n        match self {{"
        );
        for (name, (rule, _)) in protocol.grammars.iter().filter(|(_, g)| g.1 == text) {
            let _ = writeln!(w, "            {kind}::{} => {},", camel(name), lit(rule));
        }
        let _ = writeln!(w, "        }}\n    }}\n}}\n");
    }
    let _ = writeln!(
        w,
        "impl TextGrammar {{\n    \
         /// The most bytes a value in this grammar may have (`max_bytes`), when it is bounded.\n    \
         pub const fn max_bytes(self) -> Option<usize> {{\n        match self {{"
    );
    for (name, _) in protocol.grammars.iter().filter(|(_, g)| g.1) {
        let max = protocol.bounds.get(name);
        let max = max.map_or("None".to_owned(), |n| format!("Some({n})"));
        let _ = writeln!(w, "            TextGrammar::{} => {max},", camel(name));
    }
    let _ = writeln!(w, "        }}\n    }}\n}}\n");
    s
}

fn verb_rs(w: &mut String, protocol: &Protocol, verb: &Verb) {
    let token = &verb.verb;
    let _ = writeln!(w, "/// `EMQ.{token}`: {}", verb.summary);
    let _ = writeln!(
        w,
        "pub mod {} {{\n    #[allow(unused_imports)]\n    use super::*;\n",
        token.to_lowercase()
    );
    if has_form(verb) {
        let anchor = verb.keys.iter().position(|k| k.anchor).unwrap_or(0);
        let keys: Vec<String> = verb
            .keys
            .iter()
            .map(|k| slot_rs(&protocol.slots[&k.slot]))
            .collect();
        let syntax = syntax(protocol, verb);
        let _ = writeln!(
            w,
            "    /// `{syntax}`\n    pub const FORM: Form = Form {{\n        verb: {},\n        \
             syntax: {},\n        keys: &[{}],\n        anchor: {anchor},\n        values: {},\n        \
             class: Class::{},\n    }};\n",
            lit(token),
            lit(&syntax),
            keys.join(", "),
            verb.values.len(),
            camel(&verb.class)
        );
    }
    for (i, key) in verb.keys.iter().enumerate() {
        let anchor = if key.anchor { " (the anchor)" } else { "" };
        let _ = writeln!(
            w,
            "    /// Key {}, `{}`{anchor}: {}.\n    pub const {}: KeyAt = KeyAt({i});\n",
            i + 1,
            key.slot,
            key.flags.join(" "),
            key.slot.to_uppercase()
        );
    }
    for (i, value) in verb.values.iter().enumerate() {
        let name = value.slot.to_uppercase();
        match (&value.grammar, &value.name) {
            (Some(grammar), Some(refusal)) => {
                let (kind, grammars) = if protocol.grammars[grammar].1 {
                    ("Text", "TextGrammar")
                } else {
                    ("Number", "Grammar")
                };
                let _ = writeln!(
                    w,
                    "    /// Value {}, `<{}>`: *{grammar}*, named `{refusal}` in a refusal.\n    \
                     pub const {name}: {kind} = {kind} {{ verb: {}, at: {i}, name: {}, grammar: {grammars}::{} }};\n",
                    i + 1,
                    value.slot,
                    lit(token),
                    lit(refusal),
                    camel(grammar)
                );
            }
            _ => {
                let _ = writeln!(
                    w,
                    "    /// Value {}, `<{}>` (any bytes).\n    pub const {name}: ValueAt = ValueAt({i});\n",
                    i + 1,
                    value.slot
                );
            }
        }
    }
    let _ = writeln!(w, "}}\n");
}

fn commands_rs(protocol: &Protocol, verbs: &[Verb]) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "// @generated by module/build.rs from protocol/verbs/*.json. Do not edit: change the\n\
         // protocol data.\n\n\
         use valkey_module::commands::KeySpecFlags;\n\n\
         use crate::direct::{{handler, Command, KeyArg, Run, Verb}};\n\
         use crate::verbs;\n"
    );
    let order = ordered(protocol, verbs);
    for verb in &order {
        let _ = writeln!(
            w,
            "/// `EMQ.{}` runs [`verbs::{}::{}`].\npub struct {};\n\nimpl Run for {} {{\n    \
             const VERB: Verb = verbs::{}::{};\n}}\n",
            verb.verb,
            verb.family,
            verb.verb.to_lowercase(),
            camel(&verb.verb.to_lowercase()),
            camel(&verb.verb.to_lowercase()),
            verb.family,
            verb.verb.to_lowercase(),
        );
    }
    let _ = writeln!(
        w,
        "/// Every command this module registers: flags from its class, its summary, arity `-1`\n\
         /// (the shape step counts the arguments, so a wrong count keeps its refusal text), one key\n\
         /// spec per declared key (argv `2 + i`, its flags), its handler.\n\
         pub static COMMANDS: [Command; {}] = [",
        order.len()
    );
    for verb in &order {
        let mut flags = protocol.classes[&verb.class].clone();
        if verb.blocking {
            flags.push_str(" blocking");
        }
        let _ = writeln!(
            w,
            "    Command {{\n        name: c{},\n        handler: handler::<{}>,\n        flags: c{},\n        \
             summary: c{},\n        arity: -1,\n        keys: &[",
            lit(&format!("emq.{}", verb.verb.to_lowercase())),
            camel(&verb.verb.to_lowercase()),
            lit(&flags),
            lit(&verb.summary),
        );
        for (i, key) in verb.keys.iter().enumerate() {
            let bits: Vec<String> = key
                .flags
                .iter()
                .map(|f| {
                    let (_, konst) = KEY_FLAGS.iter().find(|(n, _)| n == f).expect("checked");
                    format!("KeySpecFlags::{konst}.bits()")
                })
                .collect();
            let _ = writeln!(
                w,
                "            KeyArg {{\n                pos: {},\n                \
                 flags: KeySpecFlags::from_bits_truncate({}),\n            }},",
                2 + i,
                bits.join(" | ")
            );
        }
        let _ = writeln!(w, "        ],\n    }},");
    }
    let _ = writeln!(w, "];");
    s
}

//! The one reader of the protocol data on the module's side: parses `protocol.json` and every
//! `verbs/<verb>.json`, and refuses (naming the file and the field) what the server or the
//! module could not take.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::data::*;

pub fn load(dir: &Path) -> Res<(Protocol, Vec<Verb>)> {
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

pub fn read_json(path: &Path) -> Res<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn field<'v>(v: &'v Value, name: &str) -> Res<&'v Value> {
    v.get(name).ok_or_else(|| format!("no field `{name}`"))
}

pub fn text(v: &Value, name: &str) -> Res<String> {
    let s = field(v, name)?
        .as_str()
        .ok_or_else(|| format!("`{name}` is not a string"))?;
    if s.contains('\0') {
        return Err(format!("`{name}` holds a NUL byte"));
    }
    Ok(s.to_owned())
}

pub fn list<'v>(v: &'v Value, name: &str) -> Res<&'v Vec<Value>> {
    field(v, name)?
        .as_array()
        .ok_or_else(|| format!("`{name}` is not an array"))
}

pub fn object<'v>(v: &'v Value, name: &str) -> Res<&'v serde_json::Map<String, Value>> {
    field(v, name)?
        .as_object()
        .ok_or_else(|| format!("`{name}` is not an object"))
}

pub fn read_protocol(path: &Path) -> Res<Protocol> {
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
    let slot_specs = object(&p, "key_slots").map_err(at)?;
    let base = slot_specs
        .get("base")
        .ok_or_else(|| at("no key slot `base`".into()))
        .and_then(|b| text(b, "pattern").map_err(at))?;
    let (head, close) = base
        .split_once("{q}")
        .filter(|(head, close)| !head.contains('{') && !close.contains('}'))
        .ok_or_else(|| {
            at(format!(
                "the base `{base}` does not hold the queue as `{{q}}`"
            ))
        })?;
    let (head, close) = (format!("{head}{{"), format!("}}{close}"));
    let mut slots = BTreeMap::new();
    let mut keys = Vec::new();
    for (name, spec) in slot_specs {
        let at = |e: String| at(format!("key slot {name}: {e}"));
        let template = text(spec, "pattern").map_err(at)?;
        if template == version_key {
            slots.insert(name.clone(), Slot::Version);
            continue;
        }
        let key = queue_key(name, spec, template.strip_prefix(&base), false).map_err(at)?;
        let slot = match key.param.as_deref() {
            None => Slot::Key(key.text.clone()),
            Some("id") => Slot::Row,
            Some(other) => {
                return Err(at(format!(
                    "a declared key's parameter is `<id>`, not `<{other}>`"
                )))
            }
        };
        slots.insert(name.clone(), slot);
        keys.push(key);
    }
    for (name, spec) in object(&p, "derived_keys").map_err(at)? {
        let at = |e: String| at(format!("derived key {name}: {e}"));
        let template = text(spec, "pattern").map_err(at)?;
        keys.push(queue_key(name, spec, template.strip_prefix("<base>"), true).map_err(at)?);
    }
    let mut seen = BTreeSet::new();
    if let Some(twice) = keys
        .iter()
        .find(|k| !seen.insert((&k.text, k.param.is_some())))
    {
        return Err(at(format!("two keys are `<base>{}`", twice.text)));
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
        head,
        close,
        keys,
    })
}

/// A queue key from its pattern's text after the base: `<type>`, or `<prefix>:<param>`.
fn queue_key(name: &str, spec: &Value, rest: Option<&str>, derived: bool) -> Res<QueueKey> {
    let rest = rest.ok_or("the pattern does not start with the base")?;
    let (kind, param) = match rest.split_once('<') {
        None => (rest.to_owned(), None),
        Some((prefix, param)) => {
            let param = param.strip_suffix('>').filter(|p| is_ident(p));
            match param {
                Some(param) if prefix.ends_with(':') && is_kind(&prefix[..prefix.len() - 1]) => {
                    (prefix.to_owned(), Some(param.to_owned()))
                }
                _ => return Err(format!("`{rest}` is not `<prefix>:<param>`")),
            }
        }
    };
    if param.is_none() && !is_kind(&kind) {
        return Err(format!("`{kind}` is not a key type (lower-case letters)"));
    }
    if !is_ident(name) {
        return Err(format!("`{name}` is not a name"));
    }
    Ok(QueueKey {
        name: name.to_owned(),
        text: kind,
        param,
        kind: text(spec, "type")?,
        holds: text(spec, "holds")?,
        derived,
    })
}

/// A key type: lower-case letters only (the base has none).
pub fn is_kind(kind: &str) -> bool {
    kind.bytes().all(|b| b.is_ascii_lowercase())
}

/// A slot or family name that is also a Rust identifier: `[a-z][a-z0-9_]*`.
pub fn is_ident(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

pub fn read_verb(path: &Path, protocol: &Protocol) -> Res<Verb> {
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
    let repeat = match v.get("repeat") {
        None => None,
        Some(r) => {
            let n = |name: &str| {
                r.get(name)
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| format!("repeat.{name} is not a count"))
            };
            let (last, max) = (n("last")?, n("max")?);
            if last == 0 || last > values.len() || max < 2 {
                return Err(format!(
                    "repeat: {last} of {} values, at most {max} times",
                    values.len()
                ));
            }
            Some((last, max))
        }
    };
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
        repeat,
    })
}

/// The module API's rules for one key spec: exactly one of RO/RW/OW/RM; at most one of
/// INSERT/DELETE/UPDATE; every flag known.
pub fn check_key_flags(flags: &[String]) -> Res<()> {
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

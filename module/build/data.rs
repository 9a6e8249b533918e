//! The protocol data as the build reads it: the shapes `read.rs` makes and the generators take.

use std::collections::BTreeMap;

pub type Res<T> = Result<T, String>;

/// What a key slot of `protocol.json` names.
#[derive(Clone, PartialEq)]
pub enum Slot {
    /// `emq:{q}:<type>`; the base `emq:{q}:` has the empty type.
    Key(String),
    /// `emq:{q}:job:<id>`.
    Row,
    /// The brand key `{emq}:version` (no queue).
    Version,
}

pub struct Protocol {
    pub job_core: Vec<String>,
    pub wire4: String,
    pub wire6: String,
    pub version_key: String,
    /// Class name → command flags.
    pub classes: BTreeMap<String, String>,
    /// Grammar name → rule text, and whether the grammar is text (not a number).
    pub grammars: BTreeMap<String, (String, bool)>,
    /// Text grammar name → the most bytes a value in it may have (`max_bytes`), when bounded.
    pub bounds: BTreeMap<String, u64>,
    pub slots: BTreeMap<String, Slot>,
    /// The base's text before the queue name, with the hashtag's `{` (`emq:{`), and after it
    /// with the `}` (`}:`).
    pub head: String,
    pub close: String,
    /// Every queue key of the data: the key slots but the brand key, then the derived keys.
    pub keys: Vec<QueueKey>,
}

/// A queue key of the data: `<base><text>`, and a parameter after it when `param` is set.
pub struct QueueKey {
    /// Its name in the data (`pending`, `row`, `group`).
    pub name: String,
    /// What follows the base: `pending`; `job:` (the row, with the parameter `id`); `` (the base).
    pub text: String,
    pub param: Option<String>,
    /// The Valkey type (`sorted set`, `channel`, …) and what the key holds.
    pub kind: String,
    pub holds: String,
    /// Derived from the base by a transition (`derived_keys`), not declared by a verb.
    pub derived: bool,
}

pub struct Key {
    pub slot: String,
    pub anchor: bool,
    pub flags: Vec<String>,
}

pub struct Val {
    pub slot: String,
    pub grammar: Option<String>,
    pub name: Option<String>,
}

pub struct Verb {
    pub verb: String,
    /// One of the job-core verbs (`job_core` lists exactly these).
    pub is_core: bool,
    /// Listed by `EMQ.VERSION` under `extensions` (a capability beside the job core).
    pub extension: bool,
    /// The command may wait inside the server (command flag `blocking`).
    pub blocking: bool,
    pub summary: String,
    pub family: String,
    pub class: String,
    pub keys: Vec<Key>,
    pub values: Vec<Val>,
    /// The last `.0` values repeat, given 1 to `.1` times (`repeat` in the data).
    pub repeat: Option<(usize, usize)>,
}

/// The key-spec flags of the data, and the crate's `KeySpecFlags` constant for each.
pub const KEY_FLAGS: [(&str, &str); 9] = [
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
pub const COMMAND_FLAGS: [&str; 8] = [
    "write",
    "readonly",
    "deny-oom",
    "fast",
    "admin",
    "allow-stale",
    "no-cluster",
    "allow-busy",
];

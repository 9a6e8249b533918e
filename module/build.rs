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
//!   key spec per declared key (position and flags);
//! * `$OUT_DIR/keys.rs`, included by `src/keyspace.rs`: the text around the queue name and one
//!   constant per queue key (`key_slots` and `derived_keys`): what follows the base.
//!
//! The reader is `build/read.rs` (the one reader on this side), the shapes `build/data.rs`, the
//! generators `build/emit.rs`, `build/commands.rs` and `build/keys.rs`.
//!
//! Data the server or the module could not take fails the build with a message naming the file
//! and the field: an unknown slot, flag, class or grammar, no anchor or two, an anchor or a base
//! marked NOT_KEY, a key spec without
//! exactly one of RO/RW/OW/RM or with two of INSERT/DELETE/UPDATE (the module API refuses both),
//! a job-core list naming a verb not described (or one twice). A handler that does not exist
//! fails compilation.

use std::path::{Path, PathBuf};

#[path = "build/commands.rs"]
mod commands;
#[path = "build/data.rs"]
mod data;
#[path = "build/emit.rs"]
mod emit;
#[path = "build/keys.rs"]
mod keys;
#[path = "build/read.rs"]
mod read;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dir = manifest.join("..").join("protocol");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    match read::load(&dir) {
        Ok((protocol, verbs)) => {
            write(
                &out.join("protocol.rs"),
                &emit::protocol_rs(&protocol, &verbs),
            );
            write(
                &out.join("commands.rs"),
                &commands::commands_rs(&protocol, &verbs),
            );
            write(&out.join("grammars.rs"), &emit::grammars_rs(&protocol));
            write(&out.join("keys.rs"), &keys::keys_rs(&protocol));
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

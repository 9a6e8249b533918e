//! `EMQ.INSTALL 1 {emq}:version` — brand a module node.

use valkey_module::{Context, ValkeyValue};

use crate::direct::Args;
use crate::errors::{self, Reply};
use crate::fence;
use crate::keyspace::VERSION_KEY;
use crate::shape::{self, Class, Form, Slot};
use crate::verbs::argv;

pub const INSTALL: Form = Form {
    verb: "INSTALL",
    syntax: "EMQ.INSTALL 1 {emq}:version",
    keys: &[Slot::Version],
    anchor: 0,
    values: 0,
    class: Class::Admission,
};

/// Shape → layout (the key is exactly `{emq}:version`) → install. No fence.
pub fn install(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let call = shape::split(&INSTALL, &argv)?;
    if call.keys[0] != VERSION_KEY {
        return Err(errors::layout(INSTALL.verb));
    }
    fence::install(ctx).map(ValkeyValue::Integer)
}

//! `EMQ.INSTALL 1 {emq}:version` — brand a module node.

use valkey_module::{Context, ValkeyString, ValkeyValue};

use crate::errors::Reply;
use crate::fence;
use crate::keyspace::VERSION_KEY;
use crate::shape::{self, Form};
use crate::verbs::{argv, layout};

const INSTALL: Form = Form {
    verb: "INSTALL",
    syntax: "EMQ.INSTALL 1 {emq}:version",
    keys: 1,
    values: 0,
};

/// Shape → layout (the key is exactly `{emq}:version`) → install. No fence.
pub fn install(ctx: &Context, args: &[ValkeyString]) -> Reply {
    let argv = argv(args);
    let call = shape::split(&INSTALL, &argv)?;
    layout(&INSTALL, call.keys[0] == VERSION_KEY)?;
    fence::install(ctx).map(ValkeyValue::Integer)
}

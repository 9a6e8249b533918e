//! `EMQ.INSTALL 1 <version>` (the brand key) — brand a module node.

use valkey_module::{Context, ValkeyValue};

use crate::direct::Args;
use crate::errors::{self, Reply};
use crate::fence;
use crate::keyspace::VERSION_KEY;
use crate::open::argv;
use crate::protocol::install::{FORM, VERSION};
use crate::shape;

/// Shape → layout (the key is exactly the brand key) → install. No fence.
pub fn install(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let call = shape::split(&FORM, &argv)?;
    if VERSION.of(&call) != VERSION_KEY {
        return Err(errors::layout(FORM.verb));
    }
    fence::install(ctx).map(ValkeyValue::Integer)
}

//! The verbs, one file per family, and the steps they share.
//!
//! A job-core verb runs: shape → layout → fence → values → gates → write guard → writes.
//! Shape, fence and guard live in their own modules; the layout step is here.

pub mod install;
pub mod jobs;
pub mod version;

use valkey_module::ValkeyString;

use crate::errors::{self, Refusal};
use crate::keyspace::Queue;
use crate::shape::Form;

/// The job-core verb tokens this module implements, in protocol order (`EMQ.VERSION` lists them).
pub const VERBS: &[&str] = &["ENQUEUE", "CLAIM"];

/// The arguments after the command name, as bytes.
pub fn argv(args: &[ValkeyString]) -> Vec<&[u8]> {
    args.iter().skip(1).map(|arg| arg.as_slice()).collect()
}

/// Layout, anchor: the queue named by `key`, which must be exactly `emq:{<q>}:<kind>`.
pub fn anchor<'a>(form: &Form, key: &'a [u8], kind: &[u8]) -> Result<Queue<'a>, Refusal> {
    Queue::from_key(key, kind).ok_or_else(|| errors::layout(form.verb))
}

/// Layout, every other key: `rebuilt` is true when each was rebuilt from the anchor's queue
/// and matched byte for byte.
pub fn layout(form: &Form, rebuilt: bool) -> Result<(), Refusal> {
    if rebuilt {
        Ok(())
    } else {
        Err(errors::layout(form.verb))
    }
}

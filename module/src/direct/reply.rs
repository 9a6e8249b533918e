//! Replies: a verb's value or its refusal, sent to the calling client.

use valkey_module::{Context, ValkeyValue};

use super::ffi;
use crate::errors::Refusal;

/// One step of a reply as the server is told it.
#[derive(Debug, PartialEq)]
enum Part<'v> {
    Integer(i64),
    Bytes(&'v [u8]),
    Null,
    /// An array of the next `n` replies.
    Array(usize),
    /// A shape the verbs never answer with: sent through the crate.
    Other(&'v ValkeyValue),
}

/// Sends a verb's answer: its value, or its refusal as one error line (CR, LF and NUL as
/// spaces).
pub fn answer(ctx: &Context, answer: Result<ValkeyValue, Refusal>) {
    match answer {
        Ok(value) => walk(&value, &mut |part| send(ctx, part)),
        Err(refusal) => ffi::reply_error(ctx.ctx, &refusal.wire_line()),
    }
}

fn send(ctx: &Context, part: Part) {
    match part {
        Part::Integer(n) => ffi::reply_integer(ctx.ctx, n),
        Part::Bytes(bytes) => ffi::reply_bytes(ctx.ctx, bytes),
        Part::Null => ffi::reply_null(ctx.ctx),
        Part::Array(n) => ffi::reply_array(ctx.ctx, n),
        Part::Other(value) => {
            ctx.reply(Ok(value.clone()));
        }
    }
}

/// The parts of `value`, in the order they are sent (an array, then its items).
fn walk<'v>(value: &'v ValkeyValue, send: &mut impl FnMut(Part<'v>)) {
    match value {
        ValkeyValue::Integer(n) => send(Part::Integer(*n)),
        ValkeyValue::StringBuffer(bytes) => send(Part::Bytes(bytes)),
        ValkeyValue::BulkString(text) => send(Part::Bytes(text.as_bytes())),
        ValkeyValue::Null => send(Part::Null),
        ValkeyValue::Array(items) => {
            send(Part::Array(items.len()));
            for item in items {
                walk(item, send);
            }
        }
        ValkeyValue::NoReply => {}
        other => send(Part::Other(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(value: &ValkeyValue) -> Vec<Part<'_>> {
        let mut out = Vec::new();
        walk(value, &mut |part| out.push(part));
        out
    }

    #[test]
    fn a_claim_reply_is_an_array_then_its_items() {
        let claim = ValkeyValue::Array(vec![
            ValkeyValue::StringBuffer(b"JOB1".to_vec()),
            ValkeyValue::Null,
            ValkeyValue::Integer(1),
            ValkeyValue::Integer(30_000),
        ]);
        assert_eq!(
            parts(&claim),
            [
                Part::Array(4),
                Part::Bytes(b"JOB1"),
                Part::Null,
                Part::Integer(1),
                Part::Integer(30_000)
            ]
        );
    }

    #[test]
    fn nested_arrays_and_text() {
        let reap = ValkeyValue::Array(vec![
            ValkeyValue::Array(vec![ValkeyValue::BulkString("JOBa".into())]),
            ValkeyValue::Array(vec![]),
        ]);
        assert_eq!(
            parts(&reap),
            [
                Part::Array(2),
                Part::Array(1),
                Part::Bytes(b"JOBa"),
                Part::Array(0)
            ]
        );
        assert_eq!(parts(&ValkeyValue::NoReply), []);
        let other = ValkeyValue::SimpleStringStatic("OK");
        assert_eq!(parts(&other), [Part::Other(&other)]);
    }
}

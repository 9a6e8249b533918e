//! Replies: a verb's value or its refusal, sent to the calling client.

use valkey_module::{Context, ValkeyValue};

use super::ffi::{self, Out};
use crate::errors::Refusal;

/// One step of a reply as the server is told it.
#[derive(Debug, PartialEq)]
enum Part<'v> {
    Send(Out<'v>),
    /// A shape the verbs never answer with: sent through the crate.
    Other(&'v ValkeyValue),
}

/// Sends a verb's answer: its value, or its refusal as one error line (CR, LF and NUL as
/// spaces).
pub fn answer(ctx: &Context, answer: Result<ValkeyValue, Refusal>) {
    match answer {
        Ok(value) => walk(&value, &mut |part| send(ctx, part)),
        Err(refusal) => ffi::reply(ctx.ctx, Out::Error(&refusal.wire_line())),
    }
}

fn send(ctx: &Context, part: Part) {
    match part {
        Part::Send(out) => ffi::reply(ctx.ctx, out),
        Part::Other(value) => {
            ctx.reply(Ok(value.clone()));
        }
    }
}

/// The parts of `value`, in the order they are sent (an array, then its items).
fn walk<'v>(value: &'v ValkeyValue, send: &mut impl FnMut(Part<'v>)) {
    match value {
        ValkeyValue::Integer(n) => send(Part::Send(Out::Integer(*n))),
        ValkeyValue::StringBuffer(bytes) => send(Part::Send(Out::Bytes(bytes))),
        ValkeyValue::BulkString(text) => send(Part::Send(Out::Bytes(text.as_bytes()))),
        ValkeyValue::Null => send(Part::Send(Out::Null)),
        ValkeyValue::Array(items) => {
            send(Part::Send(Out::Array(items.len())));
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

    fn parts(value: &ValkeyValue) -> Vec<Out<'_>> {
        let mut out = Vec::new();
        walk(value, &mut |part| match part {
            Part::Send(part) => out.push(part),
            Part::Other(_) => panic!("sent through the crate"),
        });
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
                Out::Array(4),
                Out::Bytes(b"JOB1"),
                Out::Null,
                Out::Integer(1),
                Out::Integer(30_000)
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
                Out::Array(2),
                Out::Array(1),
                Out::Bytes(b"JOBa"),
                Out::Array(0)
            ]
        );
        assert_eq!(parts(&ValkeyValue::NoReply), []);
        let other = ValkeyValue::SimpleStringStatic("OK");
        let mut sent = Vec::new();
        walk(&other, &mut |part| sent.push(part));
        assert_eq!(sent, [Part::Other(&other)]);
    }
}

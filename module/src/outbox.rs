//! The flow-outbox (docs/protocol.md, "Flows"): a flow's child that settles for good — completed,
//! or dead by `FAIL` or `REAP` (the module's timers included) — leaves an entry for its parent
//! in its own queue's `emq:{q}:outbox`, in the same command as its move. A relay moves the entry
//! to the parent's queue (`EMQ.SETTLE`, there) and then removes it (`EMQ.ACK`, here).
//!
//! An entry is a member of that sorted set (score: the time written, ms): the row's `parent`
//! (`<parent queue>` NUL `<parent id>`), NUL, the child's id, NUL, the outcome (`completed`,
//! `failed`), NUL, the result or error (any bytes, last). A queue name holds no NUL, so the first
//! three NULs split it whatever the names are.

use crate::direct::Key;
use crate::errors::Refusal;

/// The outcome of a child that completed.
pub const COMPLETED: &[u8] = b"completed";
/// The outcome of a child that died (or of a parent its child killed).
pub const FAILED: &[u8] = b"failed";

/// The entry for `parent` about its child `id`.
pub fn entry(parent: &[u8], id: &[u8], outcome: &[u8], value: &[u8]) -> Vec<u8> {
    [parent, b"\0", id, b"\0", outcome, b"\0", value].concat()
}

/// `ZADD <outbox> <now> <entry>` when the row's `parent` is not empty; nothing otherwise.
pub fn post(
    outbox: &mut Key,
    now: i64,
    parent: Option<&[u8]>,
    (id, outcome, value): (&[u8], &[u8], &[u8]),
) -> Result<(), Refusal> {
    match parent {
        Some(parent) if !parent.is_empty() => outbox
            .zadd(now, &entry(parent, id, outcome, value))
            .map(drop),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_join_with_nul_and_keep_any_value() {
        assert_eq!(
            entry(b"a b:c@\xc3\xa9\0JOB1", b"JOB2", COMPLETED, b"x\0y"),
            b"a b:c@\xc3\xa9\0JOB1\0JOB2\0completed\0x\0y".to_vec()
        );
    }
}

//! A flow's verbs (docs/protocol.md, "Flows"): `EMQ.PARENT` (a parent job waits for its
//! children), `EMQ.SETTLE` (a child's outcome recorded on its parent, in the parent's slot) and
//! `EMQ.ACK` (the relayed entry leaves the child's outbox, in the child's slot).
//!
//! Steps: shape → layout → fence → values → gates → write guard → writes.

use valkey_module::{Context, ValkeyValue};

use crate::bus::{short, Bus};
use crate::clock;
use crate::direct::{Args, Db, Kind};
use crate::errors::{self, Reply};
use crate::gates;
use crate::guard;
use crate::keyspace::{is_job_id, valid_queue, OUTBOX};
use crate::moves;
use crate::open::{argv, open};
use crate::outbox::{self, COMPLETED, FAILED};
use crate::protocol::{ack, parent, settle};
use crate::values::Grammar;

/// What `<on_failure>` says: `fail` (a dead child kills the parent) or `ignore`.
const IGNORE: &[u8] = b"ignore";

/// A `<parent>` value: empty, or `<queue name>` NUL `<id>` (the `JOB` prefix, no NUL).
fn parented(value: &[u8]) -> bool {
    if value.is_empty() {
        return true;
    }
    let Some(nul) = value.iter().position(|&b| b == 0) else {
        return false;
    };
    let (queue, id) = (&value[..nul], &value[nul + 1..]);
    valid_queue(queue) && is_job_id(id) && !id.contains(&0)
}

/// `EMQ.PARENT 2 <row> <waiting> <id> <payload> <priority> <max_attempts> <children>
/// <on_failure> <parent> <name> <backoff>` → `1` added, `0` duplicate id.
pub fn parent(ctx: &Context, args: Args) -> Reply {
    use parent::{
        BACKOFF, CHILDREN, FORM, ID, MAX_ATTEMPTS, NAME, ON_FAILURE, PARENT, PAYLOAD, PRIORITY,
        ROW, WAITING,
    };
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (row, waiting) = (ROW.of(&call), WAITING.of(&call));
    let (id, payload) = (ID.of(&call), PAYLOAD.read(&call)?);

    let priority = PRIORITY.read(&call)?;
    let max_attempts = MAX_ATTEMPTS.read(&call)?;
    CHILDREN.read(&call)?;
    let name = NAME.read(&call)?;
    let backoff = BACKOFF.read(&call)?;
    let policy = ON_FAILURE.of(&call);
    if policy != b"fail" && policy != IGNORE {
        return Err(errors::value(FORM.verb, "on failure", "fail or ignore"));
    }
    let parent = PARENT.of(&call);
    if !parented(parent) {
        return Err(errors::value(
            FORM.verb,
            "parent",
            "empty or <queue> NUL <id>",
        ));
    }

    gates::job_id(&FORM, id)?;
    let mut row = db.open(row);
    if row.exists() {
        return Ok(ValkeyValue::Integer(0));
    }
    let [mut waiting] = gates::sorted_sets(&db, [waiting])?;

    guard?;
    row.hset(&[
        (b"state", b"waiting"),
        (b"attempts", b"0"),
        (b"payload", payload),
        (b"children", CHILDREN.of(&call)),
    ])?;
    let mut more: Vec<(&[u8], &[u8])> = Vec::new();
    if priority != 0 {
        more.push((b"priority", PRIORITY.of(&call)));
    }
    if max_attempts != 0 {
        more.push((b"max_attempts", MAX_ATTEMPTS.of(&call)));
    }
    if policy == IGNORE {
        more.push((b"on_failure", IGNORE));
    }
    let named: [(&[u8], &[u8]); 3] = [(b"parent", parent), (b"name", name), (b"backoff", backoff)];
    more.extend(named.into_iter().filter(|(_, value)| !value.is_empty()));
    if !more.is_empty() {
        row.hset(&more)?;
    }
    moves::add(&mut waiting, clock::now_ms(), id)?;
    Bus::open(&db, &queue).job(b"waiting", id, b"0", None)?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.SETTLE 4 <waiting> <pending> <dead> <base> <id> <child_queue> <child_id> <outcome>
/// <value>` → `waiting`, `ready`, `dead`, `duplicate`, `late` or `gone`.
pub fn settle(ctx: &Context, args: Args) -> Reply {
    use settle::{CHILD_ID, CHILD_QUEUE, DEAD, FORM, ID, OUTCOME, PENDING, VALUE, WAITING};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (waiting, pending, dead) = (WAITING.of(&call), PENDING.of(&call), DEAD.of(&call));
    let (id, child_queue, child_id) = (ID.of(&call), CHILD_QUEUE.of(&call), CHILD_ID.of(&call));
    let outcome = OUTCOME.of(&call);
    let reply = |text: &[u8]| Ok(ValkeyValue::StringBuffer(text.to_vec()));

    gates::job_id(&FORM, id)?;
    if !valid_queue(child_queue) {
        return Err(errors::child_queue(FORM.verb));
    }
    if !is_job_id(child_id) {
        return Err(errors::child_not_job_id(FORM.verb));
    }
    if outcome != COMPLETED && outcome != FAILED {
        return Err(errors::outcome(FORM.verb));
    }
    let value = VALUE.read(&call)?;
    let outbox = queue.key(OUTBOX);
    let [mut waiting, mut pending, mut dead, mut outbox] =
        gates::sorted_sets(&db, [waiting, pending, dead, &outbox])?;
    let mut row = db.open(&queue.job(id));
    if row.kind() != Kind::Hash {
        return reply(b"gone");
    }
    let child = [child_queue, b":", child_id].concat();
    let (done_field, failed_field) = (
        [b"child:", &child[..]].concat(),
        [b"failed:", &child[..]].concat(),
    );
    let [state, children, priority, policy, parent, done_before, failed_before, attempts] = row
        .hash_get([
            &b"state"[..],
            b"children",
            b"priority",
            b"on_failure",
            b"parent",
            &done_field,
            &failed_field,
            b"attempts",
        ])?;
    if done_before.is_some() || failed_before.is_some() {
        return reply(b"duplicate");
    }
    let counted = outcome == COMPLETED || policy.as_deref() == Some(IGNORE);
    let field = if outcome == COMPLETED {
        &done_field
    } else {
        &failed_field
    };
    let attempt = attempts
        .as_deref()
        .and_then(|t| Grammar::Count.parse(t))
        .unwrap_or(0)
        .to_string();

    guard?;
    if state.as_deref() != Some(&b"waiting"[..]) {
        row.hset(&[(field, value)])?;
        return reply(b"late");
    }
    if counted {
        let stored = children.as_deref().and_then(|t| Grammar::Count.parse(t));
        let left = stored.unwrap_or(1) - 1;
        if left > 0 {
            let left = left.to_string();
            row.hset(&[(field, value), (b"children", left.as_bytes())])?;
            return reply(b"waiting");
        }
        let score = priority
            .as_deref()
            .and_then(|t| Grammar::Priority.parse(t))
            .unwrap_or(0);
        row.hset(&[(field, value), (b"children", b"0"), (b"state", b"pending")])?;
        moves::remove(&mut waiting, id)?;
        moves::add(&mut pending, score, id)?;
        Bus::open(&db, &queue).job(b"ready", id, attempt.as_bytes(), None)?;
        moves::wake(&db, &queue, 1);
        return reply(b"ready");
    }
    let now = clock::now_ms();
    let error = [&b"child "[..], &child, b" failed: ", value].concat();
    row.hset(&[(field, value), (b"state", b"dead"), (b"error", &error)])?;
    moves::remove(&mut waiting, id)?;
    moves::add(&mut dead, now, id)?;
    let reason = Some((&b"reason"[..], short(&error)));
    Bus::open(&db, &queue).job(b"dead", id, attempt.as_bytes(), reason)?;
    outbox::post(&mut outbox, now, parent.as_deref(), (id, FAILED, &error))?;
    reply(b"dead")
}

/// `EMQ.ACK 1 <outbox> <entry>` → `1` removed, `0` not there.
pub fn ack(ctx: &Context, args: Args) -> Reply {
    use ack::{ENTRY, FORM, OUTBOX};
    let argv = argv(args);
    let (call, _queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let [mut outbox] = gates::sorted_sets(&db, [OUTBOX.of(&call)])?;
    guard?;
    Ok(ValkeyValue::Integer(outbox.zrem(ENTRY.of(&call))? as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_values() {
        assert!(parented(b""));
        assert!(parented(b"q\0JOB1"));
        assert!(parented(b"a b:c@\xc3\xa9\0JOB00000000001"));
        assert!(parented(&[&[b'x'; 255][..], b"\0JOB1"].concat()));
        for bad in [
            &b"q"[..],
            b"\0JOB1",
            b"q\0XYZ1",
            b"q\0JOB1\0",
            b"a{b\0JOB1",
            b"a\tb\0JOB1",
            &[&[b'x'; 256][..], b"\0JOB1"].concat(),
        ] {
            assert!(!parented(bad), "{bad:?}");
        }
    }
}

//! Admission and leasing: `EMQ.ENQUEUE`, `EMQ.ADD`, `EMQ.CLAIM`.
//!
//! Each verb reads like its section of the protocol: shape → layout → fence → values →
//! gates → write guard → writes. A refusal at any step writes nothing.

use valkey_module::{Context, ValkeyString, ValkeyValue};

use crate::clock;
use crate::errors::{self, Refusal, Reply};
use crate::gates;
use crate::guard;
use crate::keyspace::{is_job_id, Queue, ACTIVE, BASE, PENDING, SCHEDULE};
use crate::moves;
use crate::shape::{Form, Slot};
use crate::store::{self, Answer, Kind};
use crate::values::{value, Grammar};
use crate::verbs::{argv, open};

pub const ENQUEUE: Form = Form {
    verb: "ENQUEUE",
    syntax: "EMQ.ENQUEUE 2 <row> <pending> <id> <payload>",
    keys: &[Slot::Row, Slot::Key(PENDING)],
    anchor: 1,
    values: 2,
};

pub const ADD: Form = Form {
    verb: "ADD",
    syntax: "EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts>",
    keys: &[Slot::Row, Slot::Key(PENDING), Slot::Key(SCHEDULE)],
    anchor: 1,
    values: 5,
};

pub const CLAIM: Form = Form {
    verb: "CLAIM",
    syntax: "EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>",
    keys: &[Slot::Key(PENDING), Slot::Key(ACTIVE), Slot::Key(BASE)],
    anchor: 0,
    values: 1,
};

/// This family's forms.
pub const FORMS: [Form; 3] = [ENQUEUE, ADD, CLAIM];

/// `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` → `1`, or `0` for a duplicate id.
pub fn enqueue(ctx: &Context, args: &[ValkeyString]) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &ENQUEUE, &argv)?;
    let (row, pending) = (call.keys[0], call.keys[1]);
    let (id, payload) = (call.values[0], call.values[1]);

    gates::job_id(&ENQUEUE, id)?;
    if store::exists(ctx, row)? {
        return Ok(ValkeyValue::Integer(0));
    }
    gates::sorted_sets(ctx, &[pending])?;

    guard::writable(ctx)?;
    let fields: [&[u8]; 7] = [
        row,
        b"state",
        b"pending",
        b"attempts",
        b"0",
        b"payload",
        payload,
    ];
    store::write(ctx, "HSET", &fields)?;
    moves::add(ctx, pending, b"0", id)?;
    moves::wake(ctx, &queue)?;
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts>` →
/// `1`, or `0` for a duplicate id.
pub fn add(ctx: &Context, args: &[ValkeyString]) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &ADD, &argv)?;
    let (row, pending, schedule) = (call.keys[0], call.keys[1], call.keys[2]);
    let (id, payload) = (call.values[0], call.values[1]);

    let priority = value(&ADD, "priority", Grammar::Priority, call.values[2])?;
    let delay = value(&ADD, "delay", Grammar::Delay, call.values[3])?;
    let max_attempts = value(&ADD, "max attempts", Grammar::Count, call.values[4])?;

    gates::job_id(&ADD, id)?;
    if store::exists(ctx, row)? {
        return Ok(ValkeyValue::Integer(0));
    }
    gates::sorted_sets(ctx, &[pending, schedule])?;

    guard::writable(ctx)?;
    let state: &[u8] = if delay == 0 { b"pending" } else { b"scheduled" };
    let mut fields: Vec<&[u8]> = vec![row, b"state", state, b"attempts", b"0", b"payload", payload];
    if priority != 0 {
        fields.extend([&b"priority"[..], call.values[2]]);
    }
    if max_attempts != 0 {
        fields.extend([&b"max_attempts"[..], call.values[4]]);
    }
    store::write(ctx, "HSET", &fields)?;
    if delay == 0 {
        moves::add(ctx, pending, call.values[2], id)?;
        moves::wake(ctx, &queue)?;
    } else {
        let due = moves::text(clock::now_ms() + delay);
        moves::add(ctx, schedule, due.as_bytes(), id)?;
    }
    Ok(ValkeyValue::Integer(1))
}

/// `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>` → `[]`, or
/// `[<id>, <payload>, <attempts>, <deadline>]`.
pub fn claim(ctx: &Context, args: &[ValkeyString]) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &CLAIM, &argv)?;
    let (pending, active) = (call.keys[0], call.keys[1]);

    let lease = value(&CLAIM, "lease", Grammar::Ms, call.values[0])?;
    if paused(ctx, &queue)? {
        return Ok(empty());
    }

    gates::sorted_sets(ctx, &[pending, active])?;
    let Some(id) = head(ctx, pending)? else {
        return Ok(empty());
    };
    if !is_job_id(&id) {
        return Err(errors::head_not_job(CLAIM.verb));
    }
    let row = queue.job(&id);
    if store::kind(ctx, &row)? != Kind::Hash {
        return Err(errors::head_no_row(CLAIM.verb));
    }
    if store::bytes(&store::read(ctx, "ZSCORE", &[active, &id])?).is_some() {
        return Err(errors::head_already_active(CLAIM.verb));
    }
    let (attempts, payload) = row_fields(ctx, &row)?;
    let attempts = attempts + 1;

    guard::writable(ctx)?;
    let deadline = clock::now_ms() + lease;
    let written = store::write(ctx, "ZREM", &[pending, &id])?;
    write_check(&CLAIM, &written)?;
    let written = store::write(
        ctx,
        "ZADD",
        &[active, moves::text(deadline).as_bytes(), &id],
    )?;
    write_check(&CLAIM, &written)?;
    let attempts_text = attempts.to_string();
    let lease_fields: [&[u8]; 7] = [
        &row,
        b"state",
        b"active",
        b"attempts",
        attempts_text.as_bytes(),
        b"lease_epoch",
        clock::run_id(ctx),
    ];
    store::write(ctx, "HSET", &lease_fields)?;

    Ok(ValkeyValue::Array(vec![
        ValkeyValue::StringBuffer(id),
        payload.map_or(ValkeyValue::Null, ValkeyValue::StringBuffer),
        ValkeyValue::Integer(attempts),
        ValkeyValue::Integer(deadline),
    ]))
}

/// The empty-array reply (empty or paused queue).
fn empty() -> ValkeyValue {
    ValkeyValue::Array(Vec::new())
}

/// Whether the queue's `meta` hash has `paused` = `1`.
fn paused(ctx: &Context, queue: &Queue) -> Result<bool, Refusal> {
    let flag = store::read(ctx, "HGET", &[&queue.meta(), b"paused"])?;
    Ok(store::bytes(&flag).as_deref() == Some(b"1"))
}

/// The lowest-scored id of `pending` (ties by id), if any.
fn head(ctx: &Context, pending: &[u8]) -> Result<Option<Vec<u8>>, Refusal> {
    let range = store::read(ctx, "ZRANGE", &[pending, b"0", b"0"])?;
    Ok(store::elements(&range).into_iter().next().flatten())
}

/// A row's `attempts` (absent counts as 0) and `payload` (absent is `None`).
fn row_fields(ctx: &Context, row: &[u8]) -> Result<(i64, Option<Vec<u8>>), Refusal> {
    let fields = store::read(ctx, "HMGET", &[row, b"attempts", b"payload"])?;
    let mut fields = store::elements(&fields).into_iter();
    let attempts = match fields.next().flatten() {
        None => 0,
        Some(text) => parse_attempts(&text).ok_or_else(|| errors::bad_attempts(CLAIM.verb))?,
    };
    Ok((attempts, fields.next().flatten()))
}

/// A stored attempt count: 1 to 15 decimal digits (no sign), as `claim.lua` accepts it.
fn parse_attempts(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 15 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A write that must have changed exactly one member.
fn write_check(form: &Form, written: &Answer) -> Result<(), Refusal> {
    if store::integer(written) == Some(1) {
        Ok(())
    } else {
        Err(errors::write_check(form.verb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_grammar() {
        assert_eq!(parse_attempts(b"0"), Some(0));
        assert_eq!(parse_attempts(b"12"), Some(12));
        assert_eq!(parse_attempts(b"-1"), None);
        assert_eq!(parse_attempts(b"x"), None);
        assert_eq!(parse_attempts(b""), None);
        assert_eq!(parse_attempts(b"+5"), None);
        assert_eq!(parse_attempts(b"1234567890123456"), None);
    }
}

//! What a running job reports about itself: `EMQ.PROGRESS` (the latest progress value, kept on
//! its row and announced on the bus) and `EMQ.LOG` (a line appended to its log, the row keeping
//! the last [`KEEP_LINES`]).
//!
//! Both are lease-gated like `EXTEND` and write nothing on `active`: the membership half of the
//! lease gate is asked with `ZSCORE`. Steps: shape → layout → fence → values → id gate → type
//! gate → row gate → lease gate → write guard → writes.

use valkey_module::{Context, ValkeyValue};

use crate::bus::{Bus, SHORT};
use crate::direct::{Args, Db, Key};
use crate::errors::{self, Refusal, Reply};
use crate::gates::{self, Fields};
use crate::guard;
use crate::keyspace::Queue;
use crate::open::{argv, open};
use crate::protocol::{log, progress};
use crate::shape::Form;
use crate::values::Grammar;

/// The lines a job's row keeps: `log:<n - 99>` … `log:<n>`.
pub const KEEP_LINES: i64 = 100;
/// The row fields: the latest progress value, the count of lines logged.
const PROGRESS: &[u8] = b"progress";
const LOGS: &[u8] = b"logs";

/// The lease-gated row of a running job, open for writing.
fn running<'d>(
    db: &'d Db,
    form: &Form,
    queue: &Queue,
    (active, id, token): (&[u8], &[u8], &[u8]),
) -> Result<Key<'d>, Refusal> {
    gates::job_id(form, id)?;
    let [active] = gates::sorted_sets(db, [active])?;
    let (row, fields) = gates::row(db, form, &queue.job(id), Fields::Lease)?;
    gates::lease(form, &active, id, &fields, token)?;
    if !gates::member(&active, id)? {
        return Err(errors::not_active(form.verb));
    }
    Ok(row)
}

/// `EMQ.PROGRESS 2 <active> <base> <id> <token> <value>` → `1`.
pub fn progress(ctx: &Context, args: Args) -> Reply {
    use progress::{ACTIVE, FORM, ID, TOKEN, VALUE};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (id, token) = (ID.of(&call), TOKEN.of(&call));

    TOKEN.read(&call)?;
    let value = VALUE.read(&call)?;
    let mut row = running(&db, &FORM, &queue, (ACTIVE.of(&call), id, token))?;

    guard?;
    row.hset(&[(PROGRESS, value)])?;
    drop(row);
    let data = (value.len() <= SHORT).then_some((&b"data"[..], value));
    Bus::open(&db, &queue).job(b"progress", id, token, data)?;
    Ok(ValkeyValue::Integer(1))
}

/// The number the next line gets: the row's `logs` (a *count*, else 0) + 1.
pub fn next_line(logs: Option<&[u8]>) -> i64 {
    logs.and_then(|text| Grammar::Count.parse(text))
        .unwrap_or(0)
        + 1
}

/// `EMQ.LOG 2 <active> <base> <id> <token> <line>` → the line's number.
pub fn log(ctx: &Context, args: Args) -> Reply {
    use log::{ACTIVE, FORM, ID, LINE, TOKEN};
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let (id, token) = (ID.of(&call), TOKEN.of(&call));

    TOKEN.read(&call)?;
    let line = LINE.read(&call)?;
    let mut row = running(&db, &FORM, &queue, (ACTIVE.of(&call), id, token))?;
    let [logs] = row.hash_get([LOGS])?;

    guard?;
    let n = next_line(logs.as_deref());
    let (count, field) = (n.to_string(), format!("log:{n}"));
    row.hset(&[(LOGS, count.as_bytes()), (field.as_bytes(), line)])?;
    if n > KEEP_LINES {
        row.hdel(format!("log:{}", n - KEEP_LINES).as_bytes())?;
    }
    Ok(ValkeyValue::Integer(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_from_the_count() {
        assert_eq!(next_line(None), 1);
        assert_eq!(next_line(Some(b"0")), 1);
        assert_eq!(next_line(Some(b"41")), 42);
        for bad in [&b"x"[..], b"-1", b"01", b"", b"1000000000000000"] {
            assert_eq!(next_line(Some(bad)), 1, "{bad:?}");
        }
    }
}

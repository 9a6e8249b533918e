//! `EMQ.CLAIMN`: `EMQ.CLAIM` up to `count` times in one transition, so a worker's free slots
//! cost one call.

use valkey_module::{Context, ValkeyValue};

use super::claiming::{empty, flags, lease_next};
use crate::direct::{Args, Db};
use crate::errors::Reply;
use crate::guard;
use crate::open::{argv, open};
use crate::protocol::claimn::{ACTIVE, COUNT, FORM, LEASE_MS, PENDING};

/// `EMQ.CLAIMN 3 <pending> <active> <base> <lease_ms> <count>` → `[<job>, …]` (each
/// `EMQ.CLAIM`'s five fields), ended by a limited claim's integer when one stops the run. The
/// pause read first (`1`: `[]`; `meta` not a hash: `WRONGTYPE`); the first claim's refusal is the
/// reply, a later one's ends the array (the jobs before it stand).
pub fn claimn(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());
    let sets = (PENDING.of(&call), ACTIVE.of(&call));

    let lease = LEASE_MS.read(&call)?;
    let count = COUNT.read(&call)?;
    if flags(&db, &queue)?.0 {
        return Ok(empty());
    }
    let mut jobs = Vec::new();
    // The first claim carries the write guard; a later one runs only after a job was leased.
    let mut guard = Some(guard);
    for _ in 0..count {
        let guard = guard.take().unwrap_or(Ok(()));
        match lease_next(ctx, &db, &FORM, &queue, sets, (lease, true), guard) {
            Ok(Some(ValkeyValue::Array(job))) => jobs.push(ValkeyValue::Array(job)),
            Ok(Some(limited)) => {
                jobs.push(limited);
                break;
            }
            Ok(None) => break,
            Err(refusal) if jobs.is_empty() => return Err(refusal),
            Err(_) => break,
        }
    }
    Ok(ValkeyValue::Array(jobs))
}

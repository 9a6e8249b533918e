//! `EMQ.COMPLETEN`: `EMQ.COMPLETE` for each of up to 1000 leased jobs, then `EMQ.CLAIM` up to
//! `next` times, in one transition — the settlements a worker has ready together in one call.

use valkey_module::{Context, ValkeyValue};

use super::{completed, completion, leased_job};
use crate::direct::{Args, Db};
use crate::errors::Reply;
use crate::guard;
use crate::open::{argv, open};
use crate::protocol::completen::{
    ACTIVE, DONE, FORM, ID, KEEP, LEASE_MS, NEXT, PENDING, RESULT, TOKEN,
};
use crate::shape::ValueAt;
use crate::values::{Number, Text};
use crate::verbs::jobs;

/// `EMQ.COMPLETEN 4 <active> <done> <pending> <base> <keep> <lease_ms> <next> <id> <token>
/// <result> [<id> <token> <result> …]` → `[[<outcome>, …], <job>, …]`: per triple in order
/// `EMQ.COMPLETE`'s transition, its outcome `1` or its refusal's text (that job untouched, the
/// others settled); then up to min(`next`, triples) claims, `EMQ.CLAIM`'s, each job's five fields,
/// a limited claim's integer ending the reply when one stopped the claims. Each completion that
/// landed writes its `completed` entry after the claims, with the job leased in its place (the
/// k-th landed, the k-th leased) as `next`: no `active` entry of its own.
pub fn completen(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    // Values step: the fixed values, then each triple's, in the form's order.
    let keep = KEEP.read(&call)?;
    let lease = LEASE_MS.read(&call)?;
    let next = NEXT.read(&call)?;
    let step = FORM.repeat.map_or(0, |r| r.last);
    let groups = FORM.groups(call.values.len()).unwrap_or(1);
    let mut jobs = Vec::with_capacity(groups);
    for n in 0..groups {
        let token = Number {
            at: TOKEN.at + n * step,
            ..TOKEN
        };
        let result = Text {
            at: RESULT.at + n * step,
            ..RESULT
        };
        token.read(&call)?;
        let id = ValueAt(ID.0 + n * step).of(&call);
        jobs.push((id, token.of(&call), result.read(&call)?, keep));
    }

    // The write guard refuses the whole call (a writable replica: D5), before any job's gates.
    guard.clone()?;
    let (active, done, pending) = (ACTIVE.of(&call), DONE.of(&call), PENDING.of(&call));
    // The completions, in order: each one's outcome; the ones that landed write their entries
    // after the claims, each carrying the job leased in its place (one entry for both events).
    let mut landed = Vec::with_capacity(groups);
    let outcomes = jobs
        .into_iter()
        .map(
            |job| match completion(&db, &FORM, &queue, guard.clone(), (active, done), job) {
                Ok(()) => {
                    landed.push(job);
                    ValkeyValue::Integer(1)
                }
                // A job's refusal is its outcome; the other jobs go on.
                Err(refusal) => ValkeyValue::StringBuffer(refusal.as_bytes().to_vec()),
            },
        )
        .collect::<Vec<_>>();
    let claims = usize::try_from(next).unwrap_or(usize::MAX).min(groups);
    let mut reply = vec![ValkeyValue::Array(outcomes)];
    let mut leased = Vec::with_capacity(claims);
    for _ in 0..claims {
        match jobs::lease_next(
            ctx,
            &db,
            &FORM,
            &queue,
            (pending, active),
            (lease, false),
            Ok(()),
        ) {
            Ok(Some(ValkeyValue::Array(job))) => {
                if let Some((id, n)) = leased_job(&job) {
                    leased.push((id.to_vec(), n));
                }
                reply.push(ValkeyValue::Array(job));
            }
            Ok(Some(limited)) => {
                reply.push(limited);
                break;
            }
            // Nothing to claim, paused, or refused: the completions stand.
            Ok(None) | Err(_) => break,
        }
    }
    for (at, job) in landed.into_iter().enumerate() {
        let next = leased.get(at).map(|(id, n)| (&id[..], *n));
        completed(&db, &queue, job, next)?;
    }
    Ok(ValkeyValue::Array(reply))
}

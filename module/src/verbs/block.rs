//! `EMQ.BCLAIM`: the claim that waits inside the server for a job.
//!
//! It runs `EMQ.CLAIM`'s code ([`jobs::lease_head`]) as its own verb. With nothing to claim (an
//! empty or paused queue) the client waits on `<pending>` until the timeout; every native verb
//! that makes a job ready signals that key ([`crate::moves::wake`]), and each signal runs the
//! same claim again in the client's context: a job answers it, a refusal answers it, nothing
//! (the queue paused, or another client was first) keeps it waiting. Its writes replicate as
//! the plain commands, as `EMQ.CLAIM`'s do: never `EMQ.BCLAIM`.

use valkey_module::{Context, ValkeyValue};

use crate::direct::{self, Args, Retry, Wait};
use crate::errors::Reply;
use crate::protocol::bclaim::{FORM, LEASE_MS, PENDING, TIMEOUT_MS};
use crate::verbs::jobs::{self, Claimer};

/// `EMQ.BCLAIM`'s claimer: `EMQ.CLAIM`'s keys and lease, then the timeout.
const BCLAIM: Claimer = Claimer {
    form: &FORM,
    lease: LEASE_MS,
    timeout: Some(TIMEOUT_MS),
};

/// Where the waited key is among the command's arguments (the name, `numkeys`, then the keys).
const WAITED_ARG: usize = 2 + PENDING.0;

/// `EMQ.BCLAIM 3 <pending> <active> <base> <lease_ms> <timeout_ms>` → `EMQ.CLAIM`'s reply for a
/// job, at once or when one is ready; nil when the timeout passed (inside `MULTI` or a script,
/// at once when there is nothing to claim).
pub fn bclaim(ctx: &Context, args: Args) -> Reply {
    let (claimed, timeout) = jobs::lease_head(ctx, args, &BCLAIM)?;
    if let Some(job) = claimed {
        return Ok(job);
    }
    if !direct::may_wait(ctx) {
        return Ok(ValkeyValue::Null);
    }
    direct::wait_on::<Waiting>(ctx, args, WAITED_ARG, timeout);
    Ok(ValkeyValue::NoReply)
}

/// The waiting `EMQ.BCLAIM`.
struct Waiting;

impl Wait for Waiting {
    const RETRY: Retry = retry;
}

/// `<pending>` was signalled: the claim again. A job or a refusal answers; nothing to claim
/// keeps the client waiting.
fn retry(ctx: &Context, args: Args) -> Option<Reply> {
    match jobs::lease_head(ctx, args, &BCLAIM) {
        Ok((claimed, _)) => claimed.map(Ok),
        Err(refusal) => Some(Err(refusal)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::claim;

    #[test]
    fn the_keys_and_the_lease_are_claims() {
        assert_eq!(FORM.keys, claim::FORM.keys);
        assert_eq!(FORM.anchor, claim::FORM.anchor);
        assert_eq!(FORM.class, claim::FORM.class);
        assert_eq!(FORM.values, claim::FORM.values + 1);
        assert_eq!(
            (PENDING, crate::protocol::bclaim::ACTIVE),
            (claim::PENDING, claim::ACTIVE)
        );
        assert_eq!(LEASE_MS.at, claim::LEASE_MS.at);
        assert_eq!(TIMEOUT_MS.at, LEASE_MS.at + 1);
        assert_eq!(WAITED_ARG, 2);
    }
}

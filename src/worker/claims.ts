/**
 * The bound on a worker's non-blocking claim (`EMQ.CLAIM`, or the scripted claim on wire 4), the
 * counterpart of the blocking claim's watchdog (`watcher.ts`). A claim is answered within a round
 * trip, or fails when its socket is cut (the client rejects what was in flight, and what it
 * queued while reconnecting, with `maxRetriesPerRequest: 0`). One that is neither — its socket
 * half-open after a network fault, or its bytes held back by a proxy — would otherwise hold its
 * slot for ever, and `close()` with it (close lets every claim in flight land first).
 *
 * So a claim unanswered after `CLAIM_WATCHDOG_MS` is abandoned: the slot gets
 * `ClaimUnansweredError` (transient: it backs off and goes on). If the reply still comes and
 * brings a job, no slot takes it: it is handed back (`REQUEUE`, its attempt given back); if the
 * reply never comes, a job the server leased to it goes back to `pending` when the lease expires.
 */
import { ClaimUnansweredError } from "../errors.js";
import type { ClaimedJob, ClaimOutcome } from "../jobs.js";

/** How long a non-blocking claim may stay unanswered before its slot abandons it (ms). */
export const CLAIM_WATCHDOG_MS = 5000;

/**
 * `sent`, or `ClaimUnansweredError` once it has been unanswered `ms`; a job it brings after that
 * goes to `handBack`.
 */
export function abandonable(
  sent: Promise<ClaimOutcome>,
  queue: string,
  handBack: (job: ClaimedJob) => void,
  ms = CLAIM_WATCHDOG_MS,
): Promise<ClaimOutcome> {
  let timer: NodeJS.Timeout | undefined;
  let abandoned = false;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abandoned = true;
      reject(new ClaimUnansweredError(queue, ms));
    }, ms);
  });
  sent.then(
    (job) => {
      if (abandoned && job && "id" in job) handBack(job);
    },
    () => {}, // failed after it was abandoned: nothing waits for it then
  );
  return Promise.race([sent, watchdog]).finally(() => clearTimeout(timer));
}

/**
 * Waits for `work`, or `ms` at most (then goes on without it): how `close()` bounds the replies
 * it waits for — hand-backs and settlements in flight — so a socket that never answers cannot
 * hold it up. What `work` does later is left to run (or to fail) on its own.
 */
export async function withinBound(work: Promise<unknown>, ms = CLAIM_WATCHDOG_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    bound,
  ]);
  clearTimeout(timer);
}

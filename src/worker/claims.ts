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
import type { ClaimBatch, ClaimedJob, ClaimOutcome } from "../jobs.js";

/** How long a non-blocking claim may stay unanswered before its slot abandons it (ms). */
export const CLAIM_WATCHDOG_MS = 5000;

/** A claim in flight: when it is abandoned, and how. */
interface Watched {
  deadline: number;
  abandon: () => void;
}

/**
 * The claims in flight of every worker in the process, under one timer: armed for the earliest
 * deadline among them (not one timer per claim, which a slot would arm and clear once per job),
 * it abandons every claim past its deadline when it fires and re-arms for the next; with nothing
 * in flight, no timer is left (it never holds the process open).
 */
class Watchdog {
  private readonly inFlight = new Set<Watched>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  watch(entry: Watched): () => void {
    this.inFlight.add(entry);
    if (entry.deadline < this.armedFor) this.arm(entry.deadline);
    return () => {
      this.inFlight.delete(entry);
    };
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.inFlight) {
      if (entry.deadline <= now) {
        this.inFlight.delete(entry);
        entry.abandon();
      } else if (entry.deadline < next) next = entry.deadline;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

const watchdog = new Watchdog();

/**
 * `sent`, or `ClaimUnansweredError` once it has been unanswered `ms`; a job it brings after that
 * goes to `handBack`. Every claim shares the process's one watchdog timer.
 */
export function abandonable(
  sent: Promise<ClaimOutcome>,
  queue: string,
  handBack: (job: ClaimedJob) => void,
  ms = CLAIM_WATCHDOG_MS,
): Promise<ClaimOutcome> {
  return bounded(
    sent,
    queue,
    (job) => {
      if (job && "id" in job) handBack(job);
    },
    ms,
  );
}

/** A batch claim (`CLAIMN`) bounded as `abandonable` bounds one: each job it brings late goes to `handBack`. */
export function abandonableBatch(
  sent: Promise<ClaimBatch>,
  queue: string,
  handBack: (job: ClaimedJob) => void,
  ms = CLAIM_WATCHDOG_MS,
): Promise<ClaimBatch> {
  return bounded(sent, queue, (batch) => batch.jobs.forEach(handBack), ms);
}

/** `sent`, or `ClaimUnansweredError` once unanswered `ms`; what it brings after that goes to `late`. */
function bounded<T>(sent: Promise<T>, queue: string, late: (value: T) => void, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let abandoned = false;
    const settled = watchdog.watch({
      deadline: Date.now() + ms,
      abandon: () => {
        abandoned = true;
        reject(new ClaimUnansweredError(queue, ms));
      },
    });
    sent.then(
      (value) => {
        settled();
        if (!abandoned) resolve(value);
        else late(value);
      },
      (err: unknown) => {
        settled();
        if (!abandoned) reject(err); // failed after it was abandoned: nothing waits for it then
      },
    );
  });
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

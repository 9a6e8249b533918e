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
 *
 * And the check every claimed job passes before its handler starts: enough of its lease left
 * (`LeaseClocks`, `startable`); a job that fails it is handed back the same way.
 */
import type { Connection } from "../connector/connection.js";
import { ClaimUnansweredError } from "../errors.js";
import type { ClaimedJob, ClaimOutcome } from "../jobs.js";
import { ServerClock } from "../server-clock.js";

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

/**
 * How much of a claim's lease is left as its handler would start, by the server's clock of the
 * lane's node (`ServerClock`, at the latest it may be: a stale claim is never taken for a fresh
 * one). A reply can reach its worker long after the server leased the job — a blocking claim
 * answered while the process was stopped, a scripted claim's reply held up on the way — and the
 * lease may be over by then, the job back in `pending` or held by another worker.
 */
export class LeaseClocks {
  private readonly clocks = new Map<string, ServerClock>();

  constructor(
    private readonly conn: Connection,
    private readonly fault: (err: unknown) => void,
  ) {}

  /** Reads the clocks of `lanes` ahead of their first claims (a failure waits for that claim). */
  async warm(lanes: readonly string[]): Promise<void> {
    await Promise.all(
      lanes.map((lane) =>
        this.clockOf(lane)
          .latest()
          .catch(() => {}),
      ),
    );
  }

  /**
   * The lease left (ms; negative when over) of a job claimed on `lane` with `deadline`; undefined
   * when the clock could not be read (`TIME` failed: reported to `fault`), which counts as over.
   */
  async left(lane: string, deadline: number): Promise<number | undefined> {
    try {
      return Math.floor(deadline - (await this.clockOf(lane).latest()));
    } catch (err) {
      this.fault(err);
      return undefined;
    }
  }

  private clockOf(lane: string): ServerClock {
    let clock = this.clocks.get(lane);
    if (!clock) {
      clock = new ServerClock(this.conn, lane);
      this.clocks.set(lane, clock);
    }
    return clock;
  }
}

/**
 * Whether a handler may start with `leftMs` of a `leaseMs` lease: at least half of it left. The
 * heartbeat renews a lease once a sixth of it has passed, on a tick every third, so a running
 * lease is renewed by the time half of it has passed and the renewal has the rest to land in. A
 * claim with less left is older than any lease the heartbeat lets run unrenewed: it is handed
 * back rather than run on a lease that may end before its first renewal arrives.
 */
export function startable(leftMs: number, leaseMs: number): boolean {
  return leftMs >= leaseMs / 2;
}

/**
 * The check a claimed job passes before its handler starts: is the lease still this worker's?
 * A claim's reply can reach its worker long after the server leased the job — a blocking claim
 * answered while the process was stopped (SIGSTOP, swapped out, a long garbage collection), a
 * scripted claim's reply held up on the way — and by then the lease may be over, the job reaped
 * back to `pending` or claimed by another worker. Running it then would run one job twice at once.
 *
 * The lease left is the claim's deadline (server time, from its reply) less the server's time now
 * at the latest it may be (`ServerClock.latest()`, the lane's node; so a stale claim is never taken
 * for a fresh one). Then:
 * * **over** (nothing left): the handler does not start; the job is handed back (`REQUEUE` under
 *   its token — refused, and ignored, when another worker holds it now, so it cannot disturb that
 *   worker; when nobody took it yet it is pending at once with its attempt given back, where the
 *   reaper would have counted the attempt as spent), and `leaseLost` reports `LeaseExpiredError`;
 * * **less than half left** (older than any lease the heartbeat lets run unrenewed: it renews a
 *   lease by the time half of it has passed): the lease is renewed first (`EXTEND` under its token,
 *   one round trip, bounded) and the handler starts only once that is granted — the server then
 *   says the job is still this worker's. Refused: `leaseLost` with the `LeaseLostError`, not run;
 *   unanswered or failed: reported, handed back, not run;
 * * **half or more left**: the handler starts; the heartbeat counts the lease from its grant.
 */
import type { Connection } from "../connector/connection.js";
import { ClaimUnansweredError, LeaseExpiredError, LeaseLostError } from "../errors.js";
import { type ClaimedJob, extend } from "../jobs.js";
import { ServerClock } from "../server-clock.js";
import { CLAIM_WATCHDOG_MS } from "./claims.js";

/** May the handler start: yes, with when its lease was granted (local clock), or why not. */
type StartVerdict =
  | { start: true; leasedAt: number }
  /** `handBack`: the caller hands the job back; `error`: reported with `leaseLost`, when set. */
  | { start: false; handBack: boolean; error?: LeaseExpiredError | LeaseLostError };

export class LeaseCheck {
  private readonly clocks = new Map<string, ServerClock>();

  constructor(
    private readonly conn: Connection,
    private readonly leaseMs: number,
    private readonly fault: (err: unknown) => void,
  ) {}

  /** Reads the clocks of `lanes` ahead of their first claims (a failure waits for that claim). */
  async warm(lanes: readonly string[]): Promise<void> {
    const read = (lane: string) =>
      this.clockOf(lane)
        .latest()
        .catch(() => {});
    await Promise.all(lanes.map(read));
  }

  /** The verdict on `claimed`, a job of `lane` this worker is about to run. */
  async before(lane: string, claimed: ClaimedJob): Promise<StartVerdict> {
    let left: number;
    try {
      const clock = this.clockOf(lane);
      left = Math.floor(claimed.deadline - (clock.latestNow() ?? (await clock.latest())));
    } catch (err) {
      this.fault(err); // the clock cannot be read (`TIME` failed): the lease cannot be vouched for
      return { start: false, handBack: true };
    }
    if (left <= 0) {
      return {
        start: false,
        handBack: true,
        error: new LeaseExpiredError(lane, claimed.id, -left, this.leaseMs),
      };
    }
    if (left >= this.leaseMs / 2) return { start: true, leasedAt: Date.now() - (this.leaseMs - left) };
    const asked = Date.now();
    try {
      await bounded(lane, extend(this.conn, lane, claimed.id, claimed.attempts, this.leaseMs));
      return { start: true, leasedAt: asked };
    } catch (err) {
      if (err instanceof LeaseLostError) return { start: false, handBack: false, error: err };
      this.fault(err);
      return { start: false, handBack: true };
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
 * `work`, or `ClaimUnansweredError` once it has been unanswered `CLAIM_WATCHDOG_MS` (a socket that
 * went quiet): the renewal is the last step of the claim, bounded like the claim itself.
 */
function bounded<T>(lane: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ClaimUnansweredError(lane, CLAIM_WATCHDOG_MS)), CLAIM_WATCHDOG_MS);
  });
  work.catch(() => {});
  return Promise.race([work, bound]).finally(() => clearTimeout(timer));
}

/**
 * The queue's housekeeping, run by every worker: promote due scheduled jobs, reap expired leases.
 * Both verbs are atomic and move a bounded batch per call, so any number of workers may run them
 * at once. A batch that came back full is followed at once by another. Otherwise the promoter
 * sleeps until the next scheduled job falls due (one read of the schedule's head), at most its
 * interval; the reaper sleeps its interval. Sleeps carry ±20% jitter so many workers spread out,
 * except a sleep to a due time, which all take: that is when the work is.
 */
import { ServerClock } from "./server-clock.js";
import type { Connection } from "./connector/connection.js";
import { promote, reap } from "./jobs.js";
import { queueKey } from "./keyspace.js";

export interface TimerOptions {
  /** How often due scheduled jobs are promoted at the latest (ms). Default 1000. */
  promoteEveryMs: number;
  /** How often expired leases are reaped (ms). Default 5000. */
  reapEveryMs: number;
  /** Ids moved per call. Default 1000. */
  batch: number;
  maxAttempts: number;
  keepDead: number;
  /**
   * For a worker's lanes (these loops ignore it): run the loops even where the node runs its own
   * timers (a wire-6 node whose module reports `timers`). Default false: there they stay off
   * (`src/worker/housekeeping.ts`).
   */
  hostTimers?: boolean;
}

interface TimerEvents {
  stalled(requeued: string[], dead: string[]): void;
  error(err: unknown): void;
}

/** What one round of a loop found: more work at once, a time to come back, or the interval. */
type Next = { more: true } | { more: false; inMs?: number };

/** The shortest sleep before promoting again at a due time (ms). */
const MIN_SLEEP_MS = 5;

/** How soon after a `0` wake the promoter looks at the schedule again (ms). */
const POKE_MS = 10;

export class Timers {
  private stopped = false;
  private readonly sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private loops: Promise<void>[] = [];
  /** The promoter's current sleep, which `scheduleChanged` may cut short. */
  private promoterSleep: { resolve: () => void } | undefined;
  private poke: NodeJS.Timeout | undefined;

  /** The server's clock, estimated (due times are server times). */
  private readonly serverClock: ServerClock;

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
    private readonly opts: TimerOptions,
    private readonly events: TimerEvents,
  ) {
    this.serverClock = new ServerClock(conn, queue);
  }

  start(): void {
    this.loops = [
      this.loop(
        this.opts.promoteEveryMs,
        () => this.promoteOnce(),
        (sleep) => {
          this.promoterSleep = sleep;
        },
      ),
      this.loop(this.opts.reapEveryMs, async () => ({ more: await this.reapOnce() })),
    ];
  }

  /** Promotes once; when the batch was not full, says when the next scheduled job falls due. */
  async promoteOnce(): Promise<Next> {
    if ((await promote(this.conn, this.queue, this.opts.batch)) === this.opts.batch) return { more: true };
    const head = (await this.conn.send("ZRANGE", [queueKey(this.queue, "schedule"), 0, 0, "WITHSCORES"])) as
      | Buffer[]
      | null;
    if (!head || head.length < 2) return { more: false };
    const due = Number(String(head[1]));
    if (!Number.isFinite(due)) return { more: false };
    // At least a few ms: a clock estimate a little ahead of the server must not spin the loop.
    return { more: false, inMs: Math.max(MIN_SLEEP_MS, due - (await this.serverClock.now())) };
  }

  /** Reaps once; true when the batch was full (more may be waiting). */
  async reapOnce(): Promise<boolean> {
    const { requeued, dead } = await reap(this.conn, this.queue, {
      limit: this.opts.batch,
      maxAttempts: this.opts.maxAttempts,
      keep: this.opts.keepDead,
    });
    if (requeued.length + dead.length > 0) this.events.stalled(requeued, dead);
    return requeued.length + dead.length === this.opts.batch;
  }

  /**
   * An id entered the schedule (wake message `0`): the promoter, asleep until the due time it
   * knew, reads the schedule's head again — within `POKE_MS`, so a burst of delayed adds costs
   * one look, not one per add.
   */
  scheduleChanged(): void {
    if (this.poke || !this.promoterSleep) return;
    const sleep = this.promoterSleep;
    this.poke = setTimeout(() => {
      this.poke = undefined;
      sleep.resolve();
    }, POKE_MS);
  }

  async stop(): Promise<void> {
    clearTimeout(this.poke);
    this.stopped = true;
    for (const s of this.sleeping) {
      clearTimeout(s.timer);
      s.resolve();
    }
    await Promise.all(this.loops);
  }

  private async loop(
    everyMs: number,
    once: () => Promise<Next>,
    sleeping: (sleep: { resolve: () => void } | undefined) => void = () => {},
  ): Promise<void> {
    while (!this.stopped) {
      let next: Next = { more: false };
      try {
        next = await once();
      } catch (err) {
        if (!this.stopped) this.events.error(err);
      }
      if (next.more) continue;
      const jittered = everyMs * (0.8 + 0.4 * Math.random());
      await this.sleep(next.inMs !== undefined && next.inMs < jittered ? next.inMs : jittered, sleeping);
      sleeping(undefined);
    }
  }

  private sleep(ms: number, sleeping: (sleep: { resolve: () => void }) => void): Promise<void> {
    return new Promise((resolve) => {
      const entry = { timer: setTimeout(() => done(), ms), resolve: () => done() };
      const done = () => {
        clearTimeout(entry.timer);
        this.sleeping.delete(entry);
        resolve();
      };
      this.sleeping.add(entry);
      sleeping(entry);
    });
  }
}

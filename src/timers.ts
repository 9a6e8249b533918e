/**
 * The queue's housekeeping, run by every worker: promote due scheduled jobs, reap expired leases.
 * Both verbs are atomic and move a bounded batch per call, so any number of workers may run them
 * at once. A batch that came back full is followed at once by another; otherwise the timer
 * sleeps its interval (with ±20% jitter, so many workers spread out).
 */
import type { Connection } from "./connector/connection.js";
import { promote, reap } from "./jobs.js";

export interface TimerOptions {
  /** How often due scheduled jobs are promoted (ms). Default 1000. */
  promoteEveryMs: number;
  /** How often expired leases are reaped (ms). Default 5000. */
  reapEveryMs: number;
  /** Ids moved per call. Default 1000. */
  batch: number;
  maxAttempts: number;
  keepDead: number;
}

export interface TimerEvents {
  stalled(requeued: string[], dead: string[]): void;
  error(err: unknown): void;
}

export class Timers {
  private stopped = false;
  private readonly sleeping = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private loops: Promise<void>[] = [];

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
    private readonly opts: TimerOptions,
    private readonly events: TimerEvents,
  ) {}

  start(): void {
    this.loops = [
      this.loop(
        this.opts.promoteEveryMs,
        async () => (await promote(this.conn, this.queue, this.opts.batch)) === this.opts.batch,
      ),
      this.loop(this.opts.reapEveryMs, () => this.reapOnce()),
    ];
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

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.sleeping) {
      clearTimeout(s.timer);
      s.resolve();
    }
    await Promise.all(this.loops);
  }

  private async loop(everyMs: number, once: () => Promise<boolean>): Promise<void> {
    while (!this.stopped) {
      let more = false;
      try {
        more = await once();
      } catch (err) {
        if (!this.stopped) this.events.error(err);
      }
      if (!more) await this.sleep(everyMs * (0.8 + 0.4 * Math.random()));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = { timer: setTimeout(() => done(), ms), resolve: () => done() };
      const done = () => {
        this.sleeping.delete(entry);
        resolve();
      };
      this.sleeping.add(entry);
    });
  }
}

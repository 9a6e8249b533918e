/**
 * Retention by age: a worker whose `keepCompleted` / `keepDead` give an `age` deletes the jobs of
 * its lanes that finished longer ago, through the `CLEAN` transition (as `queue.clean` and the
 * CLI do): at most `BATCH` ids per call, the next call at once while a call deleted its full
 * batch. One loop per worker, off the hot path, every `min(age / 2, 60 s)` (the shorter age's),
 * at least `MIN_EVERY_MS` apart, ±20% jitter so many workers spread out. Any number of workers
 * may run it at once (each call is atomic); the shortest age among them wins.
 */
import type { Connection } from "../connector/connection.js";
import { clean, type FinishedState } from "../jobs.js";
import type { RetentionAges } from "./options.js";

/** Ids deleted per `CLEAN` call. */
const RETENTION_BATCH = 1000;
/** The longest pause between two sweeps (ms). */
const MAX_EVERY_MS = 60_000;
/** The shortest pause between two sweeps (ms): a tiny age does not spin the loop. */
const MIN_EVERY_MS = 1000;

/** How often the sweep runs for these ages (ms); undefined: no age given, no loop. */
function sweepEveryMs(ages: RetentionAges): number | undefined {
  const given = [ages.completed, ages.dead].filter((a): a is number => a !== undefined);
  if (given.length === 0) return undefined;
  return Math.max(MIN_EVERY_MS, Math.min(MAX_EVERY_MS, Math.floor(Math.min(...given) / 2)));
}

export class Retention {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly conn: Connection,
    /** The lanes the worker serves now (lanes joined later are swept too). */
    private readonly lanes: () => readonly string[],
    private readonly ages: RetentionAges,
    private readonly error: (err: unknown) => void,
  ) {}

  /** Starts the loop when an age is given (its first sweep at once). */
  start(): void {
    const every = sweepEveryMs(this.ages);
    if (every === undefined || this.loop) return;
    this.loop = this.run(every);
  }

  /** One sweep of every lane and state with an age; returns how many jobs it deleted. */
  async sweep(): Promise<number> {
    let total = 0;
    const states: [FinishedState, number | undefined][] = [
      ["completed", this.ages.completed],
      ["dead", this.ages.dead],
    ];
    for (const lane of this.lanes()) {
      for (const [state, age] of states) {
        if (age === undefined) continue;
        for (;;) {
          if (this.stopped) return total;
          const n = await clean(this.conn, lane, state, age, RETENTION_BATCH);
          total += n;
          if (n < RETENTION_BATCH) break;
        }
      }
    }
    return total;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
  }

  private async run(every: number): Promise<void> {
    while (!this.stopped) {
      try {
        await this.sweep();
      } catch (err) {
        if (!this.stopped) this.error(err);
      }
      if (this.stopped) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, every * (0.8 + 0.4 * Math.random()));
      });
      this.wake = undefined;
    }
  }
}

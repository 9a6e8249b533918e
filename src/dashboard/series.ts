/**
 * What the dashboard keeps of a queue's past, in its own process, bounded: the samples of the
 * last minute (the "completed/s (last minute)" figure is their average: what completed in the
 * minute over the time it spans) and an hour of one-minute buckets (throughput, failures,
 * latency), a ring of `HOUR_BUCKETS` per queue — so a page opened again draws the same hour.
 * Pure.
 */

/** The span of the recent window, ms. */
const WINDOW_MS = 60_000;
/** Samples kept in the window at most (a sample every 50 ms fills it). */
const WINDOW_SAMPLES = 1200;
/** One-minute buckets kept: the last hour. */
const HOUR_BUCKETS = 60;
/** A bucket's span, ms. */
export const BUCKET_MS = 60_000;

/** What one sample counted on a queue's bus; `null` counts: its bus is off. */
interface Tally {
  at: number;
  /** Seconds since the previous sample (0 for the first). */
  seconds: number;
  completed: number | null;
  failed: number | null;
  /** How long the head of `pending` has been ready, ms. */
  latencyMs: number;
}

/** The last minute, summed: `null` when no sample of it read a bus. */
export interface MinuteFigures {
  completed: number;
  failed: number;
  /** The seconds the counted samples span. */
  seconds: number;
}

/** One minute of the hour: completions, failed attempts, the worst latency seen. */
export interface Bucket {
  /** The minute's start (ms, a multiple of `BUCKET_MS`). */
  at: number;
  completed: number;
  failed: number;
  latencyMs: number;
}

export class QueueSeries {
  private readonly recent: Tally[] = [];
  /** Ring of buckets, oldest first once full. */
  private readonly buckets: Bucket[] = [];

  add(t: Tally): void {
    this.recent.push(t);
    while (this.recent.length > WINDOW_SAMPLES || this.recent[0]!.at <= t.at - WINDOW_MS) {
      this.recent.shift();
    }
    const at = t.at - (t.at % BUCKET_MS);
    let last = this.buckets.at(-1);
    if (last?.at !== at) {
      last = { at, completed: 0, failed: 0, latencyMs: 0 };
      this.buckets.push(last);
      if (this.buckets.length > HOUR_BUCKETS) this.buckets.shift();
    }
    last.completed += t.completed ?? 0;
    last.failed += t.failed ?? 0;
    last.latencyMs = Math.max(last.latencyMs, t.latencyMs);
  }

  /** The last minute's counts and the seconds they span; null when no sample read a bus. */
  minute(): MinuteFigures | null {
    const read = this.recent.filter((t) => t.completed !== null);
    if (read.length === 0) return null;
    return {
      completed: read.reduce((s, t) => s + t.completed!, 0),
      failed: read.reduce((s, t) => s + (t.failed ?? 0), 0),
      seconds: read.reduce((s, t) => s + t.seconds, 0),
    };
  }

  /** The hour's buckets, oldest first (minutes without a sample are absent). */
  hour(): Bucket[] {
    return this.buckets.map((b) => ({ ...b }));
  }
}

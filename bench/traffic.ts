/**
 * Two measures of traffic as it arrives, not of a pre-filled queue drained from a cold start: one
 * worker (concurrency 50, a handler that sleeps 20 ms) is running and idle when work appears.
 *
 * - Resume ramp: the queue is held (paused) and filled, the worker starts and idles on it, then
 *   the hold is released. Drain = release call → the last completion event.
 * - Delayed burst: the worker idles on an empty queue; jobs are added with delays that make them
 *   all fall due at one instant `leadMs` ahead. Lateness = handler start − that instant; drain =
 *   the instant → the last completion event.
 *
 * Both record every handler start, the number of handlers running at each start (peak, and when
 * `concurrency` first ran at once) and compare the drain with the ideal: jobs × handler time ÷
 * concurrency (every slot busy from the release to the end). Times are wall-clock
 * (`performance.timeOrigin + performance.now()`): due instants are epoch ms, as the libraries'
 * delays are.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { addBatches, withTimeout } from "./load.js";
import { percentile, round } from "./stats.js";
import type { ConsumerOptions, Hold, SystemAdapter } from "./systems/types.js";

export interface TrafficPlan {
  jobs: number;
  concurrency: number;
  /** What each handler does: sleeps this long (ms). */
  handlerMs: number;
  /** How long the started worker idles before the release or the adds (ms). */
  settleMs: number;
}

export interface BurstPlan extends TrafficPlan {
  /** The due instant is this far ahead of the adds' start (ms); the adds must end before it. */
  leadMs: number;
}

/** The goal EchoMQ is held to (README): drain within 1.5× ideal, every slot busy within 100 ms. */
export const TARGETS = { drainRatio: 1.5, fullMs: 100 } as const;

export interface TrafficResult {
  jobs: number;
  completed: number;
  failed: number;
  concurrency: number;
  handlerMs: number;
  /** jobs × handlerMs ÷ concurrency (ms). */
  idealMs: number;
  /** The release (resume call, due instant) → the last completion event (ms). */
  drainMs: number;
  /** drainMs ÷ idealMs. */
  drainRatio: number;
  /** Most handlers running at once. */
  peak: number;
  /** The release → the first instant `concurrency` handlers ran at once (ms); null: never. */
  fullMs: number | null;
  /** The release → the first handler start (ms). */
  firstStartMs: number;
  /** The first failure or worker error reported, if any (a failure fails the run). */
  firstError: string | null;
  /** Most handlers running at once in each 50 ms after the release (the first 2 s), for the record. */
  peakPer50ms: number[];
}

export interface RampResult extends TrafficResult {
  /** How the queue was held and released for this system. */
  how: string;
  /** True when that is the library's queue-wide pause; false for the closest equivalent. */
  queuePause: boolean;
  /** Handlers that started before the release (must be 0: the hold held). */
  startedBeforeRelease: number;
  /** How long the release call took (ms). */
  releaseCallMs: number;
}

export interface BurstResult extends TrafficResult {
  /** Handler start − due instant, over every job (ms). */
  lateness: { min: number; p50: number; p99: number; max: number };
  /** Handlers that started before the due instant. */
  early: number;
  /** The adds ended this long before the due instant (ms). */
  addsEndedBeforeDueMs: number;
}

/** What a traffic phase needs of the Measurer that runs it. */
export interface TrafficContext {
  readonly adapter: SystemAdapter;
  readonly phaseTimeoutMs: number;
  /** A fresh database (FLUSHALL, the adapter's prepare). */
  fresh(): Promise<void>;
  /** Closes within the bound; a failure or a slow close is recorded, not thrown. */
  close(what: string, closable: { close(): Promise<void> }): Promise<void>;
}

const wallNow = (): number => performance.timeOrigin + performance.now();

const SPARK_STEP_MS = 50;
const SPARK_SPAN_MS = 2000;

/** One worker's run: its handler, its completion count, and what ran at once. */
class Tally {
  running = 0;
  peak = 0;
  fullAt: number | null = null;
  readonly starts: number[] = [];
  /** (time, running) after every start and end, in time order, for the 50 ms profile. */
  private readonly changes: [number, number][] = [];
  completed = 0;
  failed = 0;
  firstError: unknown;
  lastCompletion = Number.NaN;
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(private readonly plan: TrafficPlan) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  consumerOptions(extra: Pick<ConsumerOptions, "hold" | "delayed">): ConsumerOptions {
    const { concurrency, handlerMs, jobs } = this.plan;
    const settled = () => {
      if (this.completed + this.failed === jobs) this.resolveDone();
    };
    return {
      ...extra,
      concurrency,
      handler: async () => {
        const now = wallNow();
        this.starts.push(now);
        this.running += 1;
        this.changes.push([now, this.running]);
        if (this.running > this.peak) this.peak = this.running;
        if (this.fullAt === null && this.running >= concurrency) this.fullAt = now;
        try {
          await sleep(handlerMs);
        } finally {
          this.running -= 1;
          this.changes.push([wallNow(), this.running]);
        }
      },
      onCompleted: () => {
        this.completed += 1;
        this.lastCompletion = wallNow();
        settled();
      },
      onFailed: (err) => {
        this.failed += 1;
        this.firstError ??= err;
        settled();
      },
    };
  }

  async wait(what: string, ms: number): Promise<void> {
    await withTimeout(this.done, ms, what).catch((err) => {
      throw new Error(
        `${(err as Error).message}: ${this.completed}/${this.plan.jobs} completed, ${this.failed} failed`,
      );
    });
  }

  result(release: number): TrafficResult {
    const { jobs, concurrency, handlerMs } = this.plan;
    const idealMs = (jobs * handlerMs) / concurrency;
    const drainMs = this.lastCompletion - release;
    const profile: number[] = [];
    let i = 0;
    let running = 0;
    for (let t = release; t < release + SPARK_SPAN_MS; t += SPARK_STEP_MS) {
      while (i < this.changes.length && this.changes[i]![0] <= t) running = this.changes[i++]![1];
      let most = running;
      while (i < this.changes.length && this.changes[i]![0] < t + SPARK_STEP_MS) {
        running = this.changes[i++]![1];
        most = Math.max(most, running);
      }
      profile.push(most);
    }
    return {
      jobs,
      completed: this.completed,
      failed: this.failed,
      concurrency,
      handlerMs,
      idealMs,
      drainMs: round(drainMs, 1),
      drainRatio: round(drainMs / idealMs, 2),
      peak: this.peak,
      fullMs: this.fullAt === null ? null : round(this.fullAt - release, 1),
      firstStartMs: round(Math.min(...this.starts) - release, 1),
      peakPer50ms: profile,
      firstError: this.failed > 0 ? String(this.firstError) : null,
    };
  }
}

/** Resume ramp: hold, fill, start the worker, let it idle, release; every job must complete. */
export async function resumeRamp(ctx: TrafficContext, plan: TrafficPlan): Promise<RampResult> {
  await ctx.fresh();
  const tally = new Tally(plan);
  const hold: Hold = await ctx.adapter.hold();
  try {
    const producer = await ctx.adapter.producer();
    try {
      await addBatches(producer, plan.jobs, 50, 4);
    } finally {
      await ctx.close("resume ramp: producer", producer);
    }
    const consumer = await ctx.adapter.consumer(tally.consumerOptions({ hold }));
    try {
      await sleep(plan.settleMs);
      const startedBeforeRelease = tally.starts.length;
      const release = wallNow();
      await hold.release();
      const releaseCallMs = round(wallNow() - release, 2);
      await tally.wait("resume ramp", ctx.phaseTimeoutMs);
      return {
        ...tally.result(release),
        how: hold.how,
        queuePause: hold.queuePause,
        startedBeforeRelease,
        releaseCallMs,
      };
    } finally {
      await ctx.close("resume ramp: worker", consumer);
    }
  } finally {
    await ctx.close("resume ramp: hold", hold);
  }
}

/** Delayed burst: the worker idles, `jobs` are added all due at one instant; every job must complete. */
export async function delayedBurst(ctx: TrafficContext, plan: BurstPlan): Promise<BurstResult> {
  await ctx.fresh();
  const tally = new Tally(plan);
  const consumer = await ctx.adapter.consumer(tally.consumerOptions({ delayed: true }));
  const producer = await ctx.adapter.producer();
  try {
    await sleep(plan.settleMs);
    // A whole ms: EchoMQ and BullMQ delays are whole ms, bee-queue's delayUntil an epoch ms.
    const due = Math.ceil(Date.now() + plan.leadMs);
    await addBatches(producer, plan.jobs, 50, 4, due);
    const addsEndedBeforeDueMs = round(due - wallNow(), 1);
    if (addsEndedBeforeDueMs <= 0)
      throw new Error(`the adds ended ${-addsEndedBeforeDueMs} ms after the due instant`);
    await tally.wait("delayed burst", plan.leadMs + ctx.phaseTimeoutMs);
    const late = tally.starts.map((s) => s - due).sort((a, b) => a - b);
    return {
      ...tally.result(due),
      lateness: {
        min: round(late[0] ?? Number.NaN, 1),
        p50: round(percentile(late, 50), 1),
        p99: round(percentile(late, 99), 1),
        max: round(late.at(-1) ?? Number.NaN, 1),
      },
      early: late.filter((x) => x < 0).length,
      addsEndedBeforeDueMs,
    };
  } finally {
    await ctx.close("delayed burst: producer", producer);
    await ctx.close("delayed burst: worker", consumer);
  }
}

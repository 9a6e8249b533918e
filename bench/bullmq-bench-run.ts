/**
 * The four scenarios of BullMQ's own benchmark suite (bullmq-bench), run inside one system's
 * child process (bench/measure.ts calls `runScenarios`); the orchestration and the report are in
 * bench/bullmq-bench.ts, the definitions and their source in bench/README.md. Each scenario runs
 * `repeats` times on a fresh database; the median run counts.
 *
 * - `queue-add`: one producer awaiting each add; a 10 × 10 nested-UUID payload.
 * - `queue-add-bulk`: one batch of 50 in flight; a 1 × 1 payload.
 * - `worker-generic` / `worker-concurrent`: the jobs added first (batches of 100, not timed), then
 *   one worker (concurrency 1 / 100) whose handler returns a 1 × 1 object.
 *
 * Every scenario times only the jobs after its warm-up: the adds after the first `warmup`, or the
 * span from the `warmup`-th handler start to the last one's (handler starts, as bullmq-bench
 * counts them: the stopwatch is in the processor).
 */
import { randomUUID } from "node:crypto";
import { withTimeout } from "./load.js";
import { median, round } from "./stats.js";
import type { Payload, Producer } from "./systems/types.js";
import type { TrafficContext } from "./traffic.js";

export type ScenarioName = "queue-add" | "queue-add-bulk" | "worker-generic" | "worker-concurrent";

export interface ScenarioPlan {
  name: ScenarioName;
  /** Jobs before the stopwatch starts. */
  warmup: number;
  /** Jobs timed after the warm-up. */
  timed: number;
  /** Adds: 0 one job per call, else batches of this size. */
  bulk: number;
  /** Workers: the worker's concurrency; adds: 0. */
  concurrency: number;
  /** The payload: `width` UUID keys, each opening a chain of `depth` nested objects. */
  width: number;
  depth: number;
}

export interface BullmqBenchPlan {
  scenarios: ScenarioPlan[];
  /** Runs of each scenario (a fresh database each); the median run counts. */
  repeats: number;
}

export interface ScenarioResult {
  name: ScenarioName;
  /** Jobs timed (after the warm-up), the span they took, their rate: the median run's. */
  jobs: number;
  seconds: number;
  rate: number;
  /** Every run's rate, in order. */
  runs: number[];
  /** JSON length of one job's payload, bytes. */
  payloadBytes: number;
}

/** The fill batch of the worker scenarios (bullmq-bench adds them 100 at a time). */
const FILL_BATCH = 100;

/**
 * An object of `width` keys, each a fresh UUID whose value is a chain of `depth` − 1 further
 * objects keyed by fresh UUIDs (width × depth UUIDs in all); `depth` 1: empty objects.
 */
function nestedPayload(width: number, depth: number): Record<string, unknown> {
  const top: Record<string, unknown> = {};
  for (let i = 0; i < width; i++) {
    let level: Record<string, unknown> = {};
    top[randomUUID()] = level;
    for (let j = 1; j < depth; j++) {
      const inner: Record<string, unknown> = {};
      level[randomUUID()] = inner;
      level = inner;
    }
  }
  return top;
}

export async function runScenarios(ctx: TrafficContext, plan: BullmqBenchPlan): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  for (const s of plan.scenarios) {
    // One payload per scenario, the same object for every job (as bullmq-bench builds it once).
    const payload = nestedPayload(s.width, s.depth);
    const runs: number[] = [];
    const spans: number[] = [];
    for (let i = 0; i < Math.max(1, plan.repeats); i++) {
      await ctx.fresh();
      const seconds = s.concurrency > 0 ? await workerRun(ctx, s, payload) : await addRun(ctx, s, payload);
      spans.push(seconds);
      runs.push(round(s.timed / seconds, 0));
    }
    const mid = median(runs);
    const at = runs.reduce((best, r, i) => (Math.abs(r - mid) < Math.abs(runs[best]! - mid) ? i : best), 0);
    out.push({
      name: s.name,
      jobs: s.timed,
      seconds: round(spans[at]!, 4),
      rate: runs[at]!,
      runs,
      payloadBytes: JSON.stringify(payload).length,
    });
  }
  return out;
}

/** The add scenarios: `warmup` jobs, then the stopwatch over `timed` more. */
async function addRun(ctx: TrafficContext, s: ScenarioPlan, payload: Payload): Promise<number> {
  const producer = await ctx.adapter.producer();
  try {
    const send = async (jobs: number) => {
      if (s.bulk === 0) {
        for (let n = 0; n < jobs; n++) await producer.add(payload);
        return;
      }
      for (let n = 0; n < jobs; n += s.bulk)
        await producer.addBulk(Array.from({ length: Math.min(s.bulk, jobs - n) }, () => payload));
    };
    return await withTimeout(
      (async () => {
        await send(s.warmup);
        const t0 = performance.now();
        await send(s.timed);
        return (performance.now() - t0) / 1000;
      })(),
      ctx.phaseTimeoutMs,
      s.name,
    );
  } finally {
    await ctx.close(`${s.name}: producer`, producer);
  }
}

/** The worker scenarios: every job added first, then the stopwatch from the warm-up's last start. */
async function workerRun(ctx: TrafficContext, s: ScenarioPlan, payload: Payload): Promise<number> {
  const total = s.warmup + s.timed;
  const producer: Producer = await ctx.adapter.producer();
  try {
    for (let n = 0; n < total; n += FILL_BATCH)
      await producer.addBulk(Array.from({ length: Math.min(FILL_BATCH, total - n) }, () => payload));
  } finally {
    await ctx.close(`${s.name}: fill producer`, producer);
  }
  const waiting = await ctx.adapter.waiting();
  if (waiting !== total) throw new Error(`${s.name}: after the fill ${waiting} jobs wait, expected ${total}`);
  const result = nestedPayload(1, 1);
  let started = 0;
  let completed = 0;
  let failed = 0;
  let firstError: unknown;
  let t0 = 0;
  let t1 = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const settle = () => {
    if (completed + failed === total) resolveDone();
  };
  const consumer = await ctx.adapter.consumer({
    concurrency: s.concurrency,
    handler: () => {
      started += 1;
      if (started === s.warmup) t0 = performance.now();
      if (started === total) t1 = performance.now();
      return result;
    },
    onCompleted: () => {
      completed += 1;
      settle();
    },
    onFailed: (err) => {
      failed += 1;
      firstError ??= err;
      settle();
    },
  });
  try {
    await withTimeout(done, ctx.phaseTimeoutMs, s.name).catch((err) => {
      throw new Error(`${(err as Error).message}: ${completed}/${total} completed, ${failed} failed`);
    });
  } finally {
    await ctx.close(`${s.name}: worker`, consumer);
  }
  if (failed > 0) throw new Error(`${s.name}: ${failed} jobs failed, first: ${String(firstError)}`);
  if (started !== total) throw new Error(`${s.name}: ${started} handlers started for ${total} jobs`);
  return (t1 - t0) / 1000;
}

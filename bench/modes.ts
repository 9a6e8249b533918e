/**
 * What a bench mode runs and at which sizes: the full bench (≈ 21 minutes on 2 cores with the
 * measures on nodes of their own) and the smoke run (the same shapes, tiny). Its own module so
 * that run.ts and report.ts both read the type without importing each other.
 */
import type { LatencyPlan } from "./measure.js";
import type { BurstPlan, TrafficPlan } from "./traffic.js";

export interface ModeConfig {
  name: "none" | "aof";
  aof: boolean;
  rounds: number;
  addSeqJobs: number;
  addParallelJobs: number;
  addParallelProducers: number;
  bulkJobs: number;
  bulkBatch: number;
  /** How many times each add phase runs in a round (fresh database each time); the median counts. */
  addRepeats: number;
  processJobs: number;
  concurrencies: number[];
  processCapMs: number | null;
  latency: LatencyPlan | null;
  /** Resume ramp (bench/traffic.ts): jobs held by a pause, then released to an idle worker. */
  ramp: TrafficPlan | null;
  /** Delayed burst (bench/traffic.ts): jobs all due at one instant, an idle worker. */
  burst: BurstPlan | null;
  ceilingRequests: number;
}

/**
 * The measures a run can be narrowed to (`--measures=`). `cluster` is not part of a mode: it runs
 * once, after the modes, on clusters of its own (bench/cluster.ts), without persistence; so do
 * `lanes`, `bus`, `lateness` (bench/lateness.ts), `limits` (bench/limits.ts) and `bullmq-bench`
 * (bench/bullmq-bench.ts), on nodes of their own.
 */
export const MEASURES = [
  "add",
  "process",
  "latency",
  "ramp",
  "burst",
  "cluster",
  "lanes",
  "bus",
  "batch",
  "tracing",
  "lateness",
  "idle",
  "limits",
  "flows",
  "bullmq-bench",
] as const;
export type Measure = (typeof MEASURES)[number];

/** The mode with only the given measures (the others sized 0 or null). */
export function narrow(mode: ModeConfig, measures: readonly Measure[]): ModeConfig {
  const on = (m: Measure) => measures.includes(m);
  return {
    ...mode,
    addSeqJobs: on("add") ? mode.addSeqJobs : 0,
    addParallelJobs: on("add") ? mode.addParallelJobs : 0,
    bulkJobs: on("add") ? mode.bulkJobs : 0,
    concurrencies: on("process") ? mode.concurrencies : [],
    latency: on("latency") ? mode.latency : null,
    ramp: on("ramp") ? mode.ramp : null,
    burst: on("burst") ? mode.burst : null,
  };
}

/** The full bench's modes: with the measures on nodes of their own, ≈ 21 minutes on 2 cores. */
export function fullModes(): ModeConfig[] {
  const none: ModeConfig = {
    name: "none",
    aof: false,
    rounds: 3,
    addSeqJobs: 5_000,
    addParallelJobs: 30_000,
    addParallelProducers: 50,
    bulkJobs: 30_000,
    bulkBatch: 50,
    // An add phase lasts under a second: three in a row per round keep one burst of noise on
    // the shared machine from deciding a round's figure.
    addRepeats: 3,
    processJobs: 100_000,
    concurrencies: [1, 10, 100],
    // Binds only below 100k / 30 s = 3.3k jobs/s, i.e. at concurrency 1 on a slow day.
    processCapMs: 30_000,
    latency: { rate: 2000, durationMs: 5000, warmupMs: 1000, concurrency: 10 },
    // Ideal drain 2,000 × 20 ms ÷ 50 = 800 ms; the worker idles 250 ms before the release.
    ramp: { jobs: 2000, concurrency: 50, handlerMs: 20, settleMs: 250 },
    // Every job due 1.5 s after the adds start (they take ~0.1 s).
    burst: { jobs: 2000, concurrency: 50, handlerMs: 20, settleMs: 250, leadMs: 1500 },
    ceilingRequests: 200_000,
  };
  // With AOF: the adds and the processing at concurrency 100, where the AOF writes and the fsync
  // thread show most; the rest has the same shape as without persistence.
  const aof: ModeConfig = {
    ...none,
    name: "aof",
    aof: true,
    concurrencies: [100],
    latency: null,
    ramp: null,
    burst: null,
  };
  return [none, aof];
}

/**
 * The cluster measure (bench/cluster.ts): queues spread by slot over the primaries of a local
 * cluster, filled, then one worker per queue in one process per system; the same queues on one
 * node alongside, as the baseline.
 */
export interface ClusterConfig {
  rounds: number;
  /** Primaries of the cluster (no replicas). */
  shards: number;
  /** Queues placed on each shard, chosen by the slot of their name. */
  queuesPerShard: number;
  /** Waiting jobs each queue starts the processing from. */
  jobsPerQueue: number;
  /** Each queue's worker's concurrency. */
  concurrency: number;
  /** The fill: batches of `batch`, `inFlight` batches at a time, the queues taken in turn. */
  batch: number;
  inFlight: number;
  /** Run the same queues on one node too (the baseline of server CPU per job). */
  baseline: boolean;
}

/** The full cluster measure: 3 × 10 queues × 2,000 jobs, a worker at concurrency 10 per queue. */
export function clusterConfig(smoke: boolean): ClusterConfig {
  const full: ClusterConfig = {
    rounds: 3,
    shards: 3,
    queuesPerShard: 10,
    // 60k jobs: a processing window of 2–6 s per topology on 2 cores.
    jobsPerQueue: 2000,
    concurrency: 10,
    batch: 50,
    inFlight: 4,
    baseline: true,
  };
  // Smoke: 10 jobs per queue, 300 in all; every one must complete.
  return smoke ? { ...full, rounds: 1, jobsPerQueue: 10 } : full;
}

/** The same shapes with a few hundred jobs, one round: a check that every system still runs. */
export function smokeModes(): ModeConfig[] {
  return fullModes().map((m) => ({
    ...m,
    rounds: 1,
    addSeqJobs: 200,
    addParallelJobs: 300,
    bulkJobs: 300,
    addRepeats: 1,
    processJobs: 300,
    processCapMs: null,
    latency: m.latency && { ...m.latency, durationMs: 600, warmupMs: 100 },
    // Two jobs per slot: the same worker shape, every job must still complete.
    ramp: m.ramp && { ...m.ramp, jobs: 100, settleMs: 100 },
    burst: m.burst && { ...m.burst, jobs: 100, settleMs: 100, leadMs: 300 },
    ceilingRequests: 20_000,
  }));
}

/** Medians over the rounds, per system, and the shape of the results JSON (bench/results/*.json). */
import type { BatchReport } from "./batches.js";
import type { BusReport } from "./bus.js";
import type { TracingReport } from "./tracing.js";
import type { FlowsReport } from "./flows.js";
import type { BullmqBenchReport } from "./bullmq-bench.js";
import type { IdleReport } from "./idle.js";
import type { LanesReport } from "./lanes.js";
import type { LatenessReport } from "./lateness.js";
import type { LimitsReport } from "./limits.js";
import type { ClusterReport } from "./cluster.js";
import type { MeasureResult } from "./measure.js";
import type { ModeConfig } from "./modes.js";
import { median, round } from "./stats.js";
import { LABELS, type SystemId } from "./systems/types.js";
import type { BurstResult, RampResult, TrafficResult } from "./traffic.js";

/** A traffic measure's medians over the rounds. */
export interface TrafficSummary {
  rounds: number;
  idealMs: number;
  drainMs: number;
  drainRatio: number;
  peak: number;
  /** Median time until every slot ran at once; a round that never got there counts as +∞; null: never. */
  fullMs: number | null;
  /** Rounds in which the slots never all ran at once. */
  neverFull: number;
  firstStartMs: number;
}

interface RampSummary extends TrafficSummary {
  how: string;
  queuePause: boolean;
}

interface BurstSummary extends TrafficSummary {
  lateness: { p50: number; p99: number; max: number };
}

export interface SystemSummary {
  system: SystemId;
  label: string;
  rounds: number;
  addSeq: number;
  addParallel: number;
  bulk: number;
  /** Median processing rate by concurrency. */
  process: Record<string, number>;
  /** Concurrencies at which the time cap ended at least one round's run. */
  capped: number[];
  /** Cost, at the highest concurrency of the mode. */
  costConcurrency: number;
  serverCpuUsPerJob: number;
  workerCpuUsPerJob: number;
  addCommandsPerJob: number;
  processCommandsPerJob: number;
  bytesPerWaitingJob: number;
  /** After the warm-up second. */
  latency: { p50: number; p99: number; max: number } | null;
  /** Over every job, warm-up included. */
  latencyAll: { p50: number; p99: number; max: number } | null;
  ramp: RampSummary | null;
  burst: BurstSummary | null;
  /** Raw command rate ÷ commands per processed job. */
  ceilingJobsPerSec: number;
  /** Processing rate at costConcurrency ÷ ceilingJobsPerSec. */
  ceilingShare: number;
}

export interface ModeReport {
  mode: "none" | "aof";
  config: ModeConfig;
  ceiling: { zadd: number; hset: number; combined: number };
  moduleVersion: string | undefined;
  rounds: MeasureResult[];
  summary: SystemSummary[];
  wallSeconds: number;
}

export interface BenchReport {
  date: string;
  command: string;
  smoke: boolean;
  machine: { cpu: string; cores: number; memoryBytes: number; os: string; loadAverageAtEnd: number[] };
  versions: Record<string, string>;
  modes: ModeReport[];
  /** The cluster measure (bench/cluster.ts); absent in reports from before it, null when not run. */
  cluster?: ClusterReport | null;
  /** The lanes measure (bench/lanes.ts); absent in reports from before it, null when not run. */
  lanes?: LanesReport | null;
  /** The bus measure (bench/bus.ts); absent in reports from before it, null when not run. */
  bus?: BusReport | null;
  /** The batch measure (bench/batches.ts); absent in reports from before it, null when not run. */
  batch?: BatchReport | null;
  /** The tracing measure (bench/tracing.ts); absent in reports from before it, null when not run. */
  tracing?: TracingReport | null;
  /** The lateness measure (bench/lateness.ts); absent in reports from before it, null when not run. */
  lateness?: LatenessReport | null;
  /** The idle measure (bench/idle.ts); absent in reports from before it, null when not run. */
  idle?: IdleReport | null;
  /** The limits measure (bench/limits.ts); absent in reports from before it, null when not run. */
  limits?: LimitsReport | null;
  /** The flows measure (bench/flows.ts); absent in reports from before it, null when not run. */
  flows?: FlowsReport | null;
  /** bullmq-bench's four scenarios (bench/bullmq-bench.ts); absent in reports from before it, null when not run. */
  bullmqBench?: BullmqBenchReport | null;
  failures: string[];
  warnings: string[];
  wallSeconds: number;
}

/** The median with +∞ for "never" (null); null when that median is never. */
function medianOrNever(values: (number | null)[]): number | null {
  const v = values.map((x) => x ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  const m = v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return Number.isFinite(m) ? round(m, 1) : null;
}

function trafficSummary(rs: TrafficResult[]): TrafficSummary | null {
  if (rs.length === 0) return null;
  return {
    rounds: rs.length,
    idealMs: rs[0]!.idealMs,
    drainMs: round(median(rs.map((r) => r.drainMs)), 1),
    drainRatio: round(median(rs.map((r) => r.drainRatio)), 2),
    peak: median(rs.map((r) => r.peak)),
    fullMs: medianOrNever(rs.map((r) => r.fullMs)),
    neverFull: rs.filter((r) => r.fullMs === null).length,
    firstStartMs: round(median(rs.map((r) => r.firstStartMs)), 1),
  };
}

function rampSummary(rs: RampResult[]): RampSummary | null {
  const t = trafficSummary(rs);
  return t && { ...t, how: rs[0]!.how, queuePause: rs[0]!.queuePause };
}

function burstSummary(rs: BurstResult[]): BurstSummary | null {
  const t = trafficSummary(rs);
  const m = (f: (r: BurstResult) => number) => round(median(rs.map(f)), 1);
  return (
    t && {
      ...t,
      lateness: {
        p50: m((r) => r.lateness.p50),
        p99: m((r) => r.lateness.p99),
        max: m((r) => r.lateness.max),
      },
    }
  );
}

export function summarize(systems: SystemId[], results: MeasureResult[], rawRate: number): SystemSummary[] {
  return systems.map((system) => {
    const rs = results.filter((r) => r.system === system);
    const m = (f: (r: MeasureResult) => number | undefined) =>
      median(rs.map(f).filter((x): x is number => x !== undefined));
    const cs = [...new Set(rs.flatMap((r) => r.process.map((p) => p.concurrency)))].sort((a, b) => a - b);
    const top = cs.at(-1) ?? 0;
    const at = (r: MeasureResult) => r.process.find((p) => p.concurrency === top);
    const process: Record<string, number> = {};
    for (const c of cs) process[String(c)] = m((r) => r.process.find((p) => p.concurrency === c)?.rate);
    const addCommandsPerJob = m((r) => at(r)?.addCommandsPerJob);
    const processCommandsPerJob = m((r) => at(r)?.processCommandsPerJob);
    const ceilingJobsPerSec = round(rawRate / processCommandsPerJob, 0);
    const lat = rs.map((r) => r.latency).filter((l): l is NonNullable<typeof l> => l !== null);
    return {
      system,
      label: LABELS[system],
      rounds: rs.length,
      addSeq: m((r) => r.addSeq?.rate),
      addParallel: m((r) => r.addParallel?.rate),
      bulk: m((r) => r.bulk?.rate),
      process,
      capped: cs.filter((c) => rs.some((r) => r.process.find((p) => p.concurrency === c)?.capped)),
      costConcurrency: top,
      serverCpuUsPerJob: m((r) => at(r)?.serverCpuUsPerJob),
      workerCpuUsPerJob: m((r) => at(r)?.workerCpuUsPerJob),
      addCommandsPerJob,
      processCommandsPerJob,
      // every fill of every round measured it
      bytesPerWaitingJob: round(median(rs.flatMap((r) => r.process.map((p) => p.bytesPerWaitingJob))), 0),
      latency:
        lat.length === 0
          ? null
          : {
              p50: median(lat.map((l) => l.p50)),
              p99: median(lat.map((l) => l.p99)),
              max: median(lat.map((l) => l.max)),
            },
      latencyAll:
        lat.length === 0
          ? null
          : {
              p50: median(lat.map((l) => l.all.p50)),
              p99: median(lat.map((l) => l.all.p99)),
              max: median(lat.map((l) => l.all.max)),
            },
      ramp: rampSummary(rs.flatMap((r) => (r.ramp ? [r.ramp] : []))),
      burst: burstSummary(rs.flatMap((r) => (r.burst ? [r.burst] : []))),
      ceilingJobsPerSec,
      ceilingShare: round((process[String(top)] ?? Number.NaN) / ceilingJobsPerSec, 3),
    };
  });
}

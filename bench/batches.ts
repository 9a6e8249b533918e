/**
 * The batch measure: what batch processing (the Worker option `batch`) gives. On the bench's own
 * single nodes (no persistence), each round runs, each in a child process of its own, EchoMQ wire 4
 * and wire 6 with one job per handler call at concurrency 100, and with batches of `size` jobs per
 * handler call (`batches` batches at once: the same 100 jobs in hand), and BullMQ at concurrency
 * 100 beside them (its batches are BullMQ Pro's, not in the open package). Each run fills `jobs`
 * waiting jobs (batches of 50, 4 in flight) and processes them with no-op handlers, completed
 * jobs deleted: the rate, and the server's and the worker's CPU per job.
 */
import { median, round } from "./stats.js";
import type { SystemId } from "./systems/types.js";
import { runVariants } from "./variants.js";

interface BatchConfig {
  rounds: number;
  /** Waiting jobs each run fills and processes. */
  jobs: number;
  /** The one-job-per-call runs' concurrency. */
  concurrency: number;
  /** Jobs per handler call in the batch runs. */
  size: number;
  /** Batches at once in the batch runs (the worker's concurrency). */
  batches: number;
}

export function batchConfig(smoke: boolean): BatchConfig {
  const full: BatchConfig = { rounds: 3, jobs: 100_000, concurrency: 100, size: 50, batches: 2 };
  return smoke ? { ...full, rounds: 1, jobs: 300 } : full;
}

interface BatchRow {
  system: SystemId;
  /** Jobs per handler call: 1, or the batch size. */
  perCall: number;
  /** Medians over the rounds. */
  jobsPerSec: number;
  processUsPerJob: number;
  workerUsPerJob: number;
}

export interface BatchReport {
  config: BatchConfig;
  moduleVersion?: string;
  rows: BatchRow[];
}

interface Variant {
  system: SystemId;
  batched: boolean;
}

const LABEL: Partial<Record<SystemId, string>> = {
  "echomq-w4": "EchoMQ wire 4",
  "echomq-w6": "EchoMQ wire 6",
  bullmq: "BullMQ",
};

export async function runBatchMeasure(
  cfg: BatchConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<BatchReport> {
  const all: Variant[] = [
    { system: "echomq-w4", batched: false },
    { system: "echomq-w4", batched: true },
    { system: "echomq-w6", batched: false },
    { system: "echomq-w6", batched: true },
    { system: "bullmq", batched: false },
  ];
  const runs = all.filter((v) => only.includes(v.system));
  const name = (v: Variant) => `${v.system} ${v.batched ? `batch ${cfg.size}` : "one per call"}`;
  const { samples, moduleVersion } = await runVariants(
    "batch",
    cfg,
    runs.map((v) => ({
      system: v.system,
      name: name(v),
      plan: v.batched ? { batch: cfg.size, concurrencies: [cfg.batches] } : {},
    })),
    failures,
  );
  const rows: BatchRow[] = [];
  for (const v of runs) {
    const list = samples.get(name(v));
    if (!list?.length) continue;
    rows.push({
      system: v.system,
      perCall: v.batched ? cfg.size : 1,
      jobsPerSec: round(median(list.map((x) => x.rate)), 0),
      processUsPerJob: round(median(list.map((x) => x.process))),
      workerUsPerJob: round(median(list.map((x) => x.worker))),
    });
  }
  return { config: cfg, ...(moduleVersion ? { moduleVersion } : {}), rows };
}

/** The batch measure's table, each row against BullMQ's rate. */
export function renderBatch(report: BatchReport): string[] {
  const { rows, config } = report;
  const bull = rows.find((r) => r.system === "bullmq");
  const out = [
    `## Batch processing: many jobs per handler call (${config.rounds} round${config.rounds === 1 ? "" : "s"})`,
    "",
    `${config.jobs} jobs filled (batches of 50, 4 in flight), then processed with no-op handlers, completed jobs ` +
      `deleted; no persistence. One job per call: concurrency ${config.concurrency}. Batches: ` +
      `\`new Worker(queue, handler, { batch: { size: ${config.size} }, concurrency: ${config.batches} })\` ` +
      `(${config.size * config.batches} jobs in hand). BullMQ's batches are BullMQ Pro's: it runs one job per call.`,
    "",
    "| system | jobs per call | jobs/s | vs BullMQ | Valkey µs/job | worker µs/job |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const vs = bull && r.system !== "bullmq" ? `${round(r.jobsPerSec / bull.jobsPerSec, 2)}×` : "";
    out.push(
      `| ${LABEL[r.system] ?? r.system} | ${r.perCall} | ${round(r.jobsPerSec / 1000)}k | ${vs} | ${r.processUsPerJob} | ${r.workerUsPerJob} |`,
    );
  }
  return out;
}

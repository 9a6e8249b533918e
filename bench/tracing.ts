/**
 * The tracing measure: what OpenTelemetry traces cost per job. EchoMQ wire 4 and wire 6, each
 * with tracing off (the default), on with an SDK (`tracing: true` on the producer's queue and the
 * worker; an SDK that records every span and drops it at export: bench/systems/noop-tracing.ts)
 * and on with the API alone (no SDK: nothing records, as for a job sampled out), each run in a
 * child process of its own (bench/variants.ts): `jobs` waiting jobs filled (batches of 50, 4 in
 * flight, one `create` span per job), then processed by one worker at `concurrency` (a `claim`,
 * a `process` and a `complete` span per job, and one `HGET` of the job's trace context). Per job: the producer's and the worker's CPU (the spans), the server's CPU (the
 * `trace` field on the row, the extra `HGET`), and the worker's rate.
 */
import { median, round } from "./stats.js";
import type { SystemId } from "./systems/types.js";
import { runVariants, type VariantsConfig } from "./variants.js";

type TracingConfig = VariantsConfig;

export function tracingConfig(smoke: boolean): TracingConfig {
  const full: TracingConfig = { rounds: 3, jobs: 20_000, concurrency: 50 };
  return smoke ? { ...full, rounds: 1, jobs: 300 } : full;
}

/** Off; on with an SDK that records every span (and drops it at export); on with the API alone. */
type Tracing = "off" | "sdk" | "api";

interface TracingRow {
  system: "echomq-w4" | "echomq-w6";
  tracing: Tracing;
  /** Medians over the rounds. */
  jobsPerSec: number;
  producerUsPerJob: number;
  workerUsPerJob: number;
  serverUsPerJob: number;
}

export interface TracingReport {
  config: TracingConfig;
  /** What `EMQ.VERSION` reported on the module node, when wire 6 ran. */
  moduleVersion?: string;
  rows: TracingRow[];
}

const SYSTEMS = ["echomq-w4", "echomq-w6"] as const;

export async function runTracingMeasure(
  cfg: TracingConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<TracingReport> {
  const runs = SYSTEMS.filter((s) => only.includes(s)).flatMap((system) =>
    (["off", "sdk", "api"] as const).map((tracing: Tracing) => ({
      system,
      tracing,
      name: `${system} tracing ${tracing}`,
      plan: tracing === "off" ? {} : { tracing },
    })),
  );
  const { samples, moduleVersion } = await runVariants("tracing", cfg, runs, failures);
  const rows: TracingRow[] = [];
  for (const v of runs) {
    const list = samples.get(v.name);
    if (!list?.length) continue;
    rows.push({
      system: v.system,
      tracing: v.tracing,
      jobsPerSec: round(median(list.map((x) => x.rate)), 0),
      producerUsPerJob: round(median(list.map((x) => x.producer))),
      workerUsPerJob: round(median(list.map((x) => x.worker))),
      serverUsPerJob: round(median(list.map((x) => x.add + x.process))),
    });
  }
  return { config: cfg, ...(moduleVersion ? { moduleVersion } : {}), rows };
}

const LABEL = { "echomq-w4": "EchoMQ wire 4", "echomq-w6": "EchoMQ wire 6" } as const;

/** The tracing measure's table and the cost per job, for the report. */
export function renderTracing(report: TracingReport): string[] {
  const { rows, config } = report;
  const out = [
    `## Tracing: CPU per job with OpenTelemetry traces off and on (${config.rounds} round${config.rounds === 1 ? "" : "s"})`,
    "",
    `${config.jobs} jobs filled (batches of 50, 4 in flight), then processed by one worker at concurrency ${config.concurrency}, ` +
      "completed jobs deleted; no persistence. Tracing `sdk`: `tracing: true` on the producer's queue and the worker, " +
      "an SDK that records every span (BatchSpanProcessor) and drops it at export; `api`: the same with the API " +
      "alone (no SDK: its no-op tracer, nothing records — as for a job sampled out: no trace context stored or read). " +
      "CPU in µs per job: the producer process during the fill, the worker process while it runs the jobs, the server " +
      "(INFO cpu) over both.",
    "",
    "| system | tracing | jobs/s | producer µs/job | worker µs/job | server µs/job | cost per job vs off (producer + worker; server) |",
    "|---|---|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const off =
      r.tracing === "off" ? undefined : rows.find((o) => o.system === r.system && o.tracing === "off");
    const plus = (x: number) => `${x >= 0 ? "+" : ""}${round(x)} µs`;
    const cost = off
      ? `${plus(r.producerUsPerJob + r.workerUsPerJob - off.producerUsPerJob - off.workerUsPerJob)}; ${plus(r.serverUsPerJob - off.serverUsPerJob)}`
      : "";
    out.push(
      `| ${LABEL[r.system]} | ${r.tracing} | ${round(r.jobsPerSec / 1000)}k | ${r.producerUsPerJob} | ${r.workerUsPerJob} | ${r.serverUsPerJob} | ${cost} |`,
    );
  }
  return out;
}

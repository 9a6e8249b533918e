/** Medians over rounds, the Markdown table (ratios against BullMQ), and the JSON's shape. */
import type { MeasureResult } from "./measure.js";
import type { ModeConfig } from "./modes.js";
import { median, round } from "./stats.js";
import { LABELS, type SystemId } from "./systems/types.js";

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
  failures: string[];
  warnings: string[];
  wallSeconds: number;
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
      ceilingJobsPerSec,
      ceilingShare: round((process[String(top)] ?? Number.NaN) / ceilingJobsPerSec, 3),
    };
  });
}

function kilo(x: number): string {
  if (!Number.isFinite(x)) return "–";
  return x >= 1000 ? `${(x / 1000).toFixed(1)}k` : x.toFixed(0);
}

function plain(digits: number) {
  return (x: number) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
}

interface Row {
  label: string;
  value: (s: SystemSummary) => number;
  format: (x: number) => string;
  /** No ratio for this row. */
  noRatio?: boolean;
  /** A cell of its own making (no ratio). */
  cell?: (s: SystemSummary) => string;
  /** A footnote mark after the value. */
  mark?: (s: SystemSummary) => string;
}

function rows(mode: ModeReport): Row[] {
  const cfg = mode.config;
  const out: Row[] = [
    { label: "add, 1 producer, one job per call (jobs/s ↑)", value: (s) => s.addSeq, format: kilo },
    {
      label: `add, ${cfg.addParallelProducers} concurrent producers (jobs/s ↑)`,
      value: (s) => s.addParallel,
      format: kilo,
    },
    { label: `bulk add, batches of ${cfg.bulkBatch} (jobs/s ↑)`, value: (s) => s.bulk, format: kilo },
  ];
  for (const c of cfg.concurrencies)
    out.push({
      label: `process ${kilo(cfg.processJobs)} waiting, concurrency ${c} (jobs/s ↑)`,
      value: (s) => s.process[String(c)] ?? Number.NaN,
      format: kilo,
      mark: (s) => (s.capped.includes(c) ? "†" : ""),
    });
  if (cfg.latency) {
    const l = cfg.latency;
    const what = `latency add→handler at ${kilo(l.rate)} jobs/s, c=${l.concurrency}`;
    out.push(
      { label: `${what}: p50 (ms ↓)`, value: (s) => s.latency?.p50 ?? Number.NaN, format: plain(1) },
      { label: `${what}: p99 (ms ↓)`, value: (s) => s.latency?.p99 ?? Number.NaN, format: plain(1) },
      { label: `${what}: max (ms ↓)`, value: (s) => s.latency?.max ?? Number.NaN, format: plain(1) },
      {
        label: "… p50 / p99 / max with the warm-up second included (ms)",
        value: () => Number.NaN,
        format: () => "",
        cell: (s) =>
          s.latencyAll
            ? `${s.latencyAll.p50.toFixed(1)} / ${s.latencyAll.p99.toFixed(1)} / ${s.latencyAll.max.toFixed(1)}`
            : "–",
        noRatio: true,
      },
    );
  }
  const top = Math.max(...cfg.concurrencies);
  out.push(
    { label: `Valkey CPU per job, c=${top} (µs ↓)`, value: (s) => s.serverCpuUsPerJob, format: plain(1) },
    {
      label: `commands per processed job, c=${top} (↓)`,
      value: (s) => s.processCommandsPerJob,
      format: plain(1),
    },
    { label: "commands per added job, bulk (↓)", value: (s) => s.addCommandsPerJob, format: plain(1) },
    { label: `worker CPU per job, c=${top} (µs ↓)`, value: (s) => s.workerCpuUsPerJob, format: plain(1) },
    { label: "memory per waiting job (bytes ↓)", value: (s) => s.bytesPerWaitingJob, format: plain(0) },
    {
      label: "raw rate ÷ commands per processed job (jobs/s)",
      value: (s) => s.ceilingJobsPerSec,
      format: kilo,
      noRatio: true,
    },
    {
      label: `process c=${top} ÷ that`,
      value: (s) => s.ceilingShare * 100,
      format: (x) => (Number.isFinite(x) ? `${x.toFixed(0)}%` : "–"),
      noRatio: true,
    },
  );
  return out;
}

export function renderTable(mode: ModeReport): string {
  const systems = mode.summary;
  const bull = systems.find((s) => s.system === "bullmq");
  const header = `| measure | ${systems.map((s) => s.label).join(" | ")} |`;
  const sep = `|---|${systems.map(() => "---:").join("|")}|`;
  const lines = [header, sep];
  for (const row of rows(mode)) {
    const cells = systems.map((s) => {
      if (row.cell) return row.cell(s);
      const v = row.value(s);
      let cell = row.format(v) + (row.mark?.(s) ?? "");
      if (!row.noRatio && bull && s.system !== "bullmq" && Number.isFinite(v)) {
        const b = row.value(bull);
        if (Number.isFinite(b) && b > 0) cell += ` (${(v / b).toFixed(2)}×)`;
      }
      return cell;
    });
    lines.push(`| ${row.label} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const v = report.versions;
  const out: string[] = [];
  out.push(`# EchoMQ bench${report.smoke ? " (smoke: tiny sizes, not a measurement)" : ""}`);
  out.push("");
  out.push(
    `${report.date} · ${m.cpu}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB · ${m.os} · ` +
      `Node ${v.node} · Valkey ${v.valkey} · EchoMQ ${v.echomq} (module ${v.echomqModule}) · ` +
      `BullMQ ${v.bullmq} · bee-queue ${v["bee-queue"]} · \`${report.command}\` · ${report.wallSeconds} s`,
  );
  out.push("");
  out.push(
    "Medians over the rounds (an add figure is first the median of the round's runs of that phase); in parentheses the ratio to BullMQ (↑ higher is better, ↓ lower is better). " +
      "Payloads are 100 bytes, handlers are no-ops, client and server share the machine's cores over " +
      "loopback. See bench/README.md for the method.",
  );
  for (const mode of report.modes) {
    out.push("");
    const persistence = mode.mode === "aof" ? "appendonly yes, appendfsync everysec" : "no persistence";
    out.push(`## ${persistence} (${mode.config.rounds} round${mode.config.rounds === 1 ? "" : "s"})`);
    out.push("");
    out.push(renderTable(mode));
    out.push("");
    if (mode.summary.some((s) => s.capped.length > 0))
      out.push(
        `† In at least one round the ${(mode.config.processCapMs ?? 0) / 1000} s cap ended this run: ` +
          "the rate is over the jobs finished by then (the rest of the 100k stayed waiting).",
        "",
      );
    out.push(
      `Raw rate (valkey-benchmark -P 16, ${kilo(mode.config.ceilingRequests)} requests): ` +
        `ZADD ${kilo(mode.ceiling.zadd)}/s, HSET ${kilo(mode.ceiling.hset)}/s, alternating ${kilo(mode.ceiling.combined)}/s.`,
    );
  }
  out.push("");
  out.push(
    "Notes. Commands are INFO commandstats calls, commands run by scripts included; the native module " +
      "writes keys through the module API (each write replicated as its plain command), so for wire 6 only " +
      "the EMQ.* verbs count (the module runs no inner command: it reads and writes keys through the " +
      "module API): its commands per job, " +
      "and the ceiling derived from them, are not comparable with the scripts'. CPU per job is measured " +
      "at the highest concurrency of the table; memory per waiting job over every fill of every round. " +
      "The raw-rate line divides valkey-benchmark's pipelined command rate by the commands a job costs; " +
      "a share above 100% means a system's commands (most run inside scripts, with no parsing or " +
      "network of their own) cost less than pipelined network commands, so it is a yardstick, not a bound.",
  );
  if (report.warnings.length > 0) {
    out.push("");
    out.push("## Warnings");
    out.push("");
    for (const w of report.warnings) out.push(`* ${w.split("\n")[0]}`);
  }
  if (report.failures.length > 0) {
    out.push("");
    out.push("## Failures");
    out.push("");
    for (const f of report.failures) out.push(`* ${f.split("\n")[0]}`);
  }
  out.push("");
  return out.join("\n");
}

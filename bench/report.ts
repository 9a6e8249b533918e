/** The Markdown report: one table per persistence mode (ratios against BullMQ), targets, notes. */
import { renderCluster } from "./cluster-report.js";
import { renderBatch } from "./batches.js";
import { renderBus } from "./bus.js";
import { renderTracing } from "./tracing.js";
import { renderLateness } from "./lateness.js";
import { renderLimits } from "./limits.js";
import { renderFlows } from "./flows.js";
import { renderBullmqBench } from "./bullmq-bench.js";
import { renderIdle } from "./idle.js";
import { renderLanes } from "./lanes.js";
import type { BenchReport, ModeReport, SystemSummary, TrafficSummary } from "./summary.js";
import { TARGETS, type TrafficPlan } from "./traffic.js";

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
  const out: Row[] = [];
  if (cfg.addSeqJobs > 0)
    out.push({ label: "add, 1 producer, one job per call (jobs/s ↑)", value: (s) => s.addSeq, format: kilo });
  if (cfg.addParallelJobs > 0)
    out.push({
      label: `add, ${cfg.addParallelProducers} concurrent producers (jobs/s ↑)`,
      value: (s) => s.addParallel,
      format: kilo,
    });
  if (cfg.bulkJobs > 0)
    out.push({
      label: `bulk add, batches of ${cfg.bulkBatch} (jobs/s ↑)`,
      value: (s) => s.bulk,
      format: kilo,
    });
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
  if (cfg.ramp) {
    const r = cfg.ramp;
    const head = `resume ramp, ${kilo(r.jobs)} jobs paused, c=${r.concurrency}, ${r.handlerMs} ms handler`;
    const mark = (s: SystemSummary) => (s.ramp && !s.ramp.queuePause ? "‡" : "");
    out.push(...trafficRows(`${head}:`, "resume", r, (s) => s.ramp, mark));
  }
  if (cfg.burst) {
    const b = cfg.burst;
    const head = `delayed burst, ${kilo(b.jobs)} jobs due at one instant, c=${b.concurrency}, ${b.handlerMs} ms handler`;
    const late = (k: "p50" | "p99" | "max") => (s: SystemSummary) => s.burst?.lateness[k] ?? Number.NaN;
    // A job waits for a free slot too: with every slot busy from `due`, job k starts at
    // floor(k ÷ concurrency) × handler time, so lateness is not 0 even for the ideal worker.
    const ideal = (p: number) =>
      Math.floor((Math.ceil((p / 100) * b.jobs) - 1) / b.concurrency) * b.handlerMs;
    out.push(
      {
        label: `${head}: handler start − due, p50 (ms ↓; ideal ${ideal(50)})`,
        value: late("p50"),
        format: plain(1),
      },
      {
        label: `… handler start − due, p99 (ms ↓; ideal ${ideal(99)})`,
        value: late("p99"),
        format: plain(1),
      },
      {
        label: `… handler start − due, max (ms ↓; ideal ${ideal(100)})`,
        value: late("max"),
        format: plain(1),
      },
      ...trafficRows("…", "due instant", b, (s) => s.burst),
    );
  }
  if (cfg.concurrencies.length === 0) return out;
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

/** Drain, drain ÷ ideal, time until every slot runs, peak: one traffic measure's rows. */
function trafficRows(
  head: string,
  release: string,
  plan: TrafficPlan,
  pick: (s: SystemSummary) => TrafficSummary | null,
  mark?: (s: SystemSummary) => string,
): Row[] {
  const idealMs = (plan.jobs * plan.handlerMs) / plan.concurrency;
  const ms = (x: number) => (x === Number.POSITIVE_INFINITY ? "never" : plain(0)(x));
  const opt = mark ? { mark } : {};
  return [
    {
      label: `${head} drain from the ${release} (ms ↓)`,
      value: (s) => pick(s)?.drainMs ?? Number.NaN,
      format: plain(0),
      ...opt,
    },
    {
      label: `… drain ÷ ideal (${idealMs.toFixed(0)} ms = jobs × handler ÷ concurrency; target ≤ ${TARGETS.drainRatio})`,
      value: (s) => pick(s)?.drainRatio ?? Number.NaN,
      format: plain(2),
      noRatio: true,
    },
    {
      label: `… ${plan.concurrency} handlers running at once, after the ${release} (ms ↓; target ≤ ${TARGETS.fullMs})`,
      value: (s) => {
        const t = pick(s);
        return t ? (t.fullMs ?? Number.POSITIVE_INFINITY) : Number.NaN;
      },
      format: ms,
      mark: (s) => {
        const t = pick(s);
        const never =
          t && t.fullMs !== null && t.neverFull > 0 ? ` (never in ${t.neverFull} of ${t.rounds} rounds)` : "";
        return (mark?.(s) ?? "") + never;
      },
    },
    {
      label: `… most handlers running at once (of ${plan.concurrency})`,
      value: (s) => pick(s)?.peak ?? Number.NaN,
      format: plain(0),
      noRatio: true,
    },
  ];
}

/** The targets line (README): EchoMQ's figures against them, met or missed. */
function targetLine(mode: ModeReport): string | null {
  const parts: string[] = [];
  const echo = mode.summary.filter((s) => s.system.startsWith("echomq"));
  for (const [name, pick] of [
    ["Resume ramp", (s: SystemSummary) => s.ramp],
    ["Delayed burst", (s: SystemSummary) => s.burst],
  ] as const) {
    const each = echo.flatMap((s) => {
      const t = pick(s);
      if (!t) return [];
      const drain = t.drainRatio <= TARGETS.drainRatio ? "met" : "missed";
      const full = t.fullMs !== null && t.fullMs <= TARGETS.fullMs ? "met" : "missed";
      const when = t.fullMs === null ? "never" : `after ${t.fullMs.toFixed(0)} ms`;
      return [
        `${s.label} drain ${t.drainRatio.toFixed(2)}× ideal (${drain}), all slots busy ${when} (${full})`,
      ];
    });
    if (each.length > 0) parts.push(`${name}: ${each.join("; ")}`);
  }
  if (parts.length === 0) return null;
  return (
    `Targets for EchoMQ (both wires): drain within ${TARGETS.drainRatio}× ideal and every slot busy within ` +
    `${TARGETS.fullMs} ms of the release. ${parts.join(". ")}.`
  );
}

function renderTable(mode: ModeReport): string {
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
  const traffic = report.modes.map((m) => (m.config.ramp ?? m.config.burst)?.handlerMs).find((x) => x);
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
      `Payloads are 100 bytes, handlers are no-ops${traffic ? ` (the resume ramp's and the delayed burst's sleep ${traffic} ms)` : ""}, client and server share the machine's cores over ` +
      "loopback. See bench/README.md for the method.",
  );
  for (const mode of report.modes) {
    out.push("");
    const persistence = mode.mode === "aof" ? "appendonly yes, appendfsync everysec" : "no persistence";
    out.push(`## ${persistence} (${mode.config.rounds} round${mode.config.rounds === 1 ? "" : "s"})`);
    out.push("");
    out.push(renderTable(mode));
    out.push("");
    const ramp = mode.summary.find((x) => x.ramp && !x.ramp.queuePause);
    if (ramp?.ramp) out.push(`‡ ${ramp.label}, resume ramp: ${ramp.ramp.how}.`, "");
    const targets = targetLine(mode);
    if (targets) out.push(targets, "");
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
  if (report.modes.length > 0) out.push("");
  if (report.modes.length > 0)
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
  if (report.cluster) out.push("", ...renderCluster(report.cluster));
  if (report.lanes) out.push("", ...renderLanes(report.lanes));
  if (report.bus) out.push("", ...renderBus(report.bus));
  if (report.batch) out.push("", ...renderBatch(report.batch));
  if (report.tracing) out.push("", ...renderTracing(report.tracing));
  if (report.lateness) out.push("", ...renderLateness(report.lateness));
  if (report.idle) out.push("", ...renderIdle(report.idle));
  if (report.limits) out.push("", ...renderLimits(report.limits));
  if (report.flows) out.push("", ...renderFlows(report.flows));
  if (report.bullmqBench) out.push("", ...renderBullmqBench(report.bullmqBench));
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

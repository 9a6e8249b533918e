/**
 * The bus measure: what the event bus costs the server. On the bench's own single nodes (no
 * persistence), each round runs, each in a child process of its own, EchoMQ wire 4 and wire 6
 * with the bus on (the default: every transition appends its entry to `emq:{q}:events`) and off
 * (`queue.setEvents({ maxLen: 0 })` after every flush), and BullMQ beside them — BullMQ writes
 * its own events stream (`bull:<q>:events`, `XADD … MAXLEN ~ 10000`) on every job, always. Each
 * run fills `jobs` waiting jobs (batches of 50, 4 in flight) and processes them with one worker
 * at `concurrency`, completed jobs deleted: server CPU (INFO cpu) per job of the fill, of the
 * processing, and of the two together (a job's whole life: its `added`, `active` and
 * `completed` entries).
 */
import { median, round } from "./stats.js";
import type { SystemId } from "./systems/types.js";
import { runVariants } from "./variants.js";

interface BusConfig {
  rounds: number;
  /** Waiting jobs each run fills and processes. */
  jobs: number;
  concurrency: number;
  /** Run BullMQ beside (the smoke run leaves it out: the processing measure runs it already). */
  bullmq: boolean;
}

export function busConfig(smoke: boolean): BusConfig {
  const full: BusConfig = { rounds: 3, jobs: 50_000, concurrency: 100, bullmq: true };
  return smoke ? { ...full, rounds: 1, jobs: 300, bullmq: false } : full;
}

interface BusRow {
  system: SystemId;
  /** `on`/`off` for EchoMQ; `always` for BullMQ (its events stream cannot be turned off). */
  bus: "on" | "off" | "always";
  /** Medians over the rounds. */
  jobsPerSec: number;
  addUsPerJob: number;
  processUsPerJob: number;
  lifeUsPerJob: number;
}

export interface BusReport {
  config: BusConfig;
  /** What `EMQ.VERSION` reported on the module node, when wire 6 ran. */
  moduleVersion?: string;
  rows: BusRow[];
}

interface Variant {
  system: SystemId;
  bus: BusRow["bus"];
}

function variants(cfg: BusConfig, only: readonly SystemId[]): Variant[] {
  const all: Variant[] = [
    { system: "echomq-w4", bus: "on" },
    { system: "echomq-w4", bus: "off" },
    { system: "echomq-w6", bus: "on" },
    { system: "echomq-w6", bus: "off" },
    ...(cfg.bullmq ? [{ system: "bullmq" as const, bus: "always" as const }] : []),
  ];
  return all.filter((v) => only.includes(v.system));
}

export async function runBusMeasure(
  cfg: BusConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<BusReport> {
  const runs = variants(cfg, only);
  const name = (v: Variant) => `${v.system} bus ${v.bus}`;
  const { samples, moduleVersion } = await runVariants(
    "bus",
    cfg,
    runs.map((v) => ({ system: v.system, name: name(v), plan: v.bus === "off" ? { bus: "off" } : {} })),
    failures,
  );
  const rows: BusRow[] = [];
  for (const v of runs) {
    const list = samples.get(name(v));
    if (!list?.length) continue;
    const add = median(list.map((x) => x.add));
    const proc = median(list.map((x) => x.process));
    rows.push({
      system: v.system,
      bus: v.bus,
      jobsPerSec: round(median(list.map((x) => x.rate)), 0),
      addUsPerJob: round(add),
      processUsPerJob: round(proc),
      lifeUsPerJob: round(median(list.map((x) => x.add + x.process))),
    });
  }
  return { config: cfg, ...(moduleVersion ? { moduleVersion } : {}), rows };
}

const LABEL: Partial<Record<SystemId, string>> = {
  "echomq-w4": "EchoMQ wire 4",
  "echomq-w6": "EchoMQ wire 6",
  bullmq: "BullMQ",
};

/** The bus measure's table and its verdict on the targets, for the report. */
export function renderBus(report: BusReport): string[] {
  const { rows, config } = report;
  const find = (system: SystemId, bus: BusRow["bus"]) =>
    rows.find((r) => r.system === system && r.bus === bus);
  const bull = find("bullmq", "always");
  const pct = (x: number) => `${x >= 0 ? "+" : ""}${Math.round(x * 100)}%`;
  const out = [
    `## The event bus: server CPU per job, bus on and off (${config.rounds} round${config.rounds === 1 ? "" : "s"})`,
    "",
    `${config.jobs} jobs filled (batches of 50, 4 in flight), then processed by one worker at concurrency ${config.concurrency}, ` +
      "completed jobs deleted; no persistence. Server CPU from INFO cpu: µs per job of the fill (the `added` entry), " +
      "of the processing (`active`, `completed`) and of the job's whole life. BullMQ writes its events stream on every job, always.",
    "",
    "| system | bus | jobs/s | fill µs/job | process µs/job | life µs/job | bus cost (life) | vs BullMQ (life) |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const off = r.bus === "on" ? find(r.system, "off") : undefined;
    const cost = off ? pct(r.lifeUsPerJob / off.lifeUsPerJob - 1) : "";
    const vs = bull && r.system !== "bullmq" ? `${round(r.lifeUsPerJob / bull.lifeUsPerJob, 2)}×` : "";
    out.push(
      `| ${LABEL[r.system] ?? r.system} | ${r.bus} | ${round(r.jobsPerSec / 1000)}k | ${r.addUsPerJob} | ${r.processUsPerJob} | ${r.lifeUsPerJob} | ${cost} | ${vs} |`,
    );
  }
  if (config.jobs < 10_000) {
    out.push(
      "",
      `(${config.jobs} jobs per run: too few to judge the targets; the full bench runs ${busConfig(false).jobs}.)`,
    );
    return out;
  }
  for (const system of ["echomq-w4", "echomq-w6"] as const) {
    const on = find(system, "on");
    const off = find(system, "off");
    if (!on || !off) continue;
    const cost = on.lifeUsPerJob / off.lifeUsPerJob - 1;
    const parts = [
      `${LABEL[system]}: the bus costs ${pct(cost)} (target ≤ +25%: ${cost <= 0.25 ? "met" : "missed"})`,
    ];
    if (bull) {
      const ratio = on.lifeUsPerJob / bull.lifeUsPerJob;
      parts.push(
        `with it on, ${round(ratio, 2)}× BullMQ (target ≤ 0.5×: ${ratio <= 0.5 ? "met" : "missed"})`,
      );
    }
    out.push("", `${parts.join("; ")}.`);
  }
  return out;
}

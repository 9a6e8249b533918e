/**
 * The idle measure: what a worker with nothing to do sends, and how soon a job reaches its
 * handler. On the bench's own single nodes (no persistence), each round runs, each in a child
 * process of its own, the order rotated: EchoMQ wire 4 (idle slots wait on the wake channel, one
 * slot let through per 2 s safety tick), EchoMQ wire 6 with the blocking claim (module 0.4.0:
 * one idle slot waits inside the server in `EMQ.BCLAIM`, re-sent every `blockMs`, 10 s by
 * default; no safety tick), EchoMQ wire 6 with `blockMs: 0` (the wake channel, as before the
 * blocking claim), and BullMQ (its `BZPOPMIN` loop on the marker key). Each run starts one worker
 * at `concurrency` on an empty queue, lets it settle 1 s, then counts the commands the clients
 * send (`MONITOR`, by name; the commands scripts run inside them apart) over `idleSeconds`; then
 * the latency run (bench/measure.ts: 2,000 jobs/s for 5 s, add → handler start, the first second
 * left out).
 *
 * The worker's own timers run as by default (EchoMQ promotes every 1 s and reaps every 5 s,
 * ±20%): they are counted, and shown apart, since the server-side timers (issue 15, part 2) take
 * them off the wire.
 */
import type { LatencyPlan, MeasureResult } from "./measure.js";
import { runRounds } from "./rounds.js";
import { median, round } from "./stats.js";
import type { SystemId } from "./systems/types.js";

interface IdleConfig {
  rounds: number;
  /** How long the idle worker's commands are counted (s). */
  idleSeconds: number;
  concurrency: number;
  latency: LatencyPlan;
}

export function idleConfig(smoke: boolean): IdleConfig {
  const latency: LatencyPlan = { rate: 2000, durationMs: 5000, warmupMs: 1000, concurrency: 10 };
  const full: IdleConfig = { rounds: 1, idleSeconds: 10, concurrency: 10, latency };
  return smoke
    ? {
        rounds: 1,
        idleSeconds: 2,
        concurrency: 10,
        latency: { ...latency, rate: 200, durationMs: 1500, warmupMs: 500 },
      }
    : full;
}

/**
 * The commands of EchoMQ's worker timers, not of its waiting: the promoter's read of the
 * schedule's head and the server clock, the native promote and reap (wire 4's reap is an
 * `EVALSHA`, and its lane registry's re-read an `HGET` like its pause reads: both counted with the
 * claims, 0.2/s each).
 */
const TIMER_COMMANDS = ["emq.promote", "emq.reap", "zrange", "time"];

interface IdleRow {
  system: SystemId;
  /** How the idle slots wait. */
  waits: "wake channel" | "blocking claim" | "BZPOPMIN";
  /** Medians over the rounds: commands the clients sent per second (MONITOR). */
  commandsPerSec: number;
  /** The same without the worker's promote / reap timers (EchoMQ). */
  waitingCommandsPerSec: number;
  /** Commands per second by name, the median round's. */
  byCommand: Record<string, number>;
  /** Commands per second scripts ran inside those (not sent), the median round's. */
  insideScriptsPerSec: number;
  p50: number;
  p99: number;
}

export interface IdleReport {
  config: IdleConfig;
  moduleVersion?: string;
  rows: IdleRow[];
}

interface Variant {
  system: SystemId;
  waits: IdleRow["waits"];
  /** EchoMQ: the worker's `blockMs`. */
  blockMs?: number;
}

function variants(only: readonly SystemId[]): Variant[] {
  const all: Variant[] = [
    { system: "echomq-w4", waits: "wake channel" },
    { system: "echomq-w6", waits: "blocking claim" },
    { system: "echomq-w6", waits: "wake channel", blockMs: 0 },
    { system: "bullmq", waits: "BZPOPMIN" },
  ];
  return all.filter((v) => only.includes(v.system));
}

const name = (v: Variant) => `${v.system} (${v.waits})`;

/** Commands per second of one idle run, and those that are not the worker's timers. */
function rates(res: MeasureResult): { all: number; waiting: number; by: Record<string, number> } {
  const idle = res.idle!;
  const by = Object.fromEntries(
    Object.entries(idle.byCommand).map(([cmd, n]) => [cmd, round(n / idle.seconds, 2)]),
  );
  // On wire 6 the claim reads no pause flag: its one HGET is the lane registry's re-read.
  const housekeeping = res.system === "echomq-w6" ? [...TIMER_COMMANDS, "hget"] : TIMER_COMMANDS;
  const timers = Object.entries(idle.byCommand)
    .filter(([cmd]) => res.system.startsWith("echomq") && housekeeping.includes(cmd))
    .reduce((sum, [, n]) => sum + n, 0);
  return { all: idle.commands / idle.seconds, waiting: (idle.commands - timers) / idle.seconds, by };
}

export async function runIdleMeasure(
  cfg: IdleConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<IdleReport> {
  const runs = variants(only);
  const samples = new Map<string, { res: MeasureResult; all: number; waiting: number }[]>();
  const { moduleVersion } = await runRounds(
    {
      measure: "idle",
      rounds: cfg.rounds,
      variants: runs,
      name,
      plan: (v, bare) => ({
        ...bare,
        latency: cfg.latency,
        idle: { seconds: cfg.idleSeconds, concurrency: cfg.concurrency },
        ...(v.blockMs !== undefined ? { blockMs: v.blockMs } : {}),
      }),
      took: (v, r, res) => {
        if (!res.idle || !res.latency) {
          failures.push(`idle: ${name(v)} round ${r}: no result`);
          return;
        }
        const { all, waiting } = rates(res);
        const list = samples.get(name(v)) ?? [];
        list.push({ res, all, waiting });
        samples.set(name(v), list);
        process.stderr.write(
          `[idle] round ${r}/${cfg.rounds} ${name(v)}: ${round(all, 2)} commands/s idle ` +
            `(${round(waiting, 2)} without timers), add→handler p50 ${res.latency.p50} ms p99 ${res.latency.p99} ms\n`,
        );
      },
    },
    failures,
  );
  const rows: IdleRow[] = [];
  for (const v of runs) {
    const list = samples.get(name(v));
    if (!list?.length) continue;
    const byAll = [...list].sort((a, b) => a.all - b.all);
    const mid = byAll[Math.floor(byAll.length / 2)]!;
    rows.push({
      system: v.system,
      waits: v.waits,
      commandsPerSec: round(median(list.map((x) => x.all)), 2),
      waitingCommandsPerSec: round(median(list.map((x) => x.waiting)), 2),
      byCommand: rates(mid.res).by,
      insideScriptsPerSec: round(mid.res.idle!.insideScripts / mid.res.idle!.seconds, 2),
      p50: round(median(list.map((x) => x.res.latency!.p50)), 2),
      p99: round(median(list.map((x) => x.res.latency!.p99)), 2),
    });
  }
  return { config: cfg, ...(moduleVersion ? { moduleVersion } : {}), rows };
}

const LABEL: Partial<Record<SystemId, string>> = {
  "echomq-w4": "EchoMQ wire 4",
  "echomq-w6": "EchoMQ wire 6",
  bullmq: "BullMQ",
};

/** The idle measure's table, for the report. */
export function renderIdle(report: IdleReport): string[] {
  const { config, rows } = report;
  const l = config.latency;
  return [
    `## An idle worker, and add → handler (${config.rounds} round${config.rounds === 1 ? "" : "s"})`,
    "",
    `One worker at concurrency ${config.concurrency} on an empty queue, settled 1 s, then the commands its clients sent over ` +
      `${config.idleSeconds} s (MONITOR; the commands scripts ran inside them apart); then ${l.rate} jobs/s for ${l.durationMs / 1000} s at concurrency ${l.concurrency}, ` +
      `add → handler start (the first ${l.warmupMs / 1000} s left out). EchoMQ's worker timers (promote every 1 s, reap every 5 s) ` +
      "run as by default; the third column leaves them out. No persistence; medians.",
    "",
    "| system | idle slots wait on | commands/s idle | without the timers | commands (per s) | inside scripts (per s) | add→handler p50 | p99 |",
    "|---|---|---:|---:|---|---:|---:|---:|",
    ...rows.map((r) => {
      const cmds = Object.entries(r.byCommand)
        .sort((a, b) => b[1] - a[1])
        .map(([cmd, n]) => `${cmd} ${n}`)
        .join(", ");
      return `| ${LABEL[r.system] ?? r.system} | ${r.waits} | ${r.commandsPerSec} | ${r.waitingCommandsPerSec} | ${cmds || "none"} | ${r.insideScriptsPerSec} | ${r.p50} ms | ${r.p99} ms |`;
    }),
  ];
}

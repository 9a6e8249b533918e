/**
 * The lateness measure: how late a delayed job starts. On the bench's own single nodes (no
 * persistence), each round runs EchoMQ wire 6 (the module promotes due jobs itself: its worker
 * leaves its own loops off), EchoMQ wire 4 (the worker's promoter: it sleeps until the schedule's
 * head falls due, and a delayed add wakes it) and BullMQ (its worker moves due jobs itself). One
 * worker at `concurrency` runs; a producer adds `jobs` jobs one at a time, one every `spacingMs`,
 * each due `delayMs` (uniform between the bounds) after it is sent. A job's lateness is the
 * handler's start minus its due instant, both on this process's `Date.now()` clock, so it
 * includes the hand-over to the worker (the wake and the claim), as a user sees it. For wire 6
 * the module's longest tick (`INFO echomq`) is reported too.
 */
import { modulePath } from "../tools/module-path.js";
import { live } from "./fork.js";
import { adapterFor } from "./load.js";
import { Admin, type BenchServer, parseInfo, sleep, startServer } from "./server.js";
import { median, round } from "./stats.js";
import { LABELS, type SystemId } from "./systems/types.js";

interface LatenessConfig {
  rounds: number;
  jobs: number;
  spacingMs: number;
  delayMs: [number, number];
  concurrency: number;
}

export function latenessConfig(smoke: boolean): LatenessConfig {
  const full: LatenessConfig = { rounds: 3, jobs: 300, spacingMs: 10, delayMs: [50, 500], concurrency: 10 };
  return smoke ? { ...full, rounds: 1, jobs: 40 } : full;
}

const SYSTEMS = ["echomq-w6", "echomq-w4", "bullmq"] as const;
const TIMERS: Record<(typeof SYSTEMS)[number], string> = {
  "echomq-w6": "server (module)",
  "echomq-w4": "host (worker)",
  bullmq: "worker",
};

interface LatenessRow {
  system: SystemId;
  timers: string;
  /** Medians over the rounds of each round's p50 / p99 / max (ms). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Wire 6: the module's longest tick over the rounds (µs): its server CPU, and wall time. */
  longestTickCpuUs?: number;
  longestTickUs?: number;
}

export interface LatenessReport {
  config: LatenessConfig;
  /** What `EMQ.VERSION` reported on the module node, when wire 6 ran. */
  moduleVersion?: string;
  rows: LatenessRow[];
}

function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** One round of one system: the lateness of every job (ms), in due order. */
async function oneRound(system: SystemId, server: BenchServer, cfg: LatenessConfig): Promise<number[]> {
  const admin = await new Admin(server.port).open();
  try {
    await admin.flush();
  } finally {
    await admin.close();
  }
  const adapter = adapterFor(system, { host: server.host, port: server.port });
  await adapter.prepare();
  const late: number[] = [];
  let failed = 0;
  const consumer = await adapter.consumer({
    concurrency: cfg.concurrency,
    delayed: true,
    handler: (data) => void late.push(Date.now() - data.t),
    onCompleted: () => {},
    onFailed: () => void failed++,
  });
  const producer = await adapter.producer();
  try {
    const [lo, hi] = cfg.delayMs;
    let lastDue = 0;
    for (let i = 0; i < cfg.jobs; i++) {
      const due = Date.now() + lo + Math.round(Math.random() * (hi - lo));
      lastDue = Math.max(lastDue, due);
      await producer.addBulk([{ t: due, pad: "" }], due);
      await sleep(cfg.spacingMs);
    }
    const deadline = lastDue + 10_000;
    while (late.length + failed < cfg.jobs && Date.now() < deadline) await sleep(20);
    if (late.length < cfg.jobs)
      throw new Error(`ran ${late.length}/${cfg.jobs} delayed jobs (${failed} failed)`);
    return late;
  } finally {
    await producer.close();
    await consumer.close();
  }
}

/** The module node's version and its timers' longest tick (CPU and wall µs, `INFO echomq`). */
async function moduleFacts(server: BenchServer): Promise<{ version: string; cpuUs: number; wallUs: number }> {
  const admin = await new Admin(server.port).open();
  try {
    const info = parseInfo(String(await admin.client.info("echomq")));
    const version = String(((await admin.client.call("EMQ.VERSION")) as unknown[])[3]);
    const field = (name: string) => Number(info.get(`echomq_timers_${name}`) ?? Number.NaN);
    return { version, cpuUs: field("longest_tick_cpu_us"), wallUs: field("longest_tick_us") };
  } finally {
    await admin.close();
  }
}

export async function runLatenessMeasure(
  cfg: LatenessConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<LatenessReport> {
  const systems = SYSTEMS.filter((s) => only.includes(s));
  const servers: { plain?: BenchServer; module?: BenchServer } = {};
  const rounds = new Map<SystemId, number[][]>();
  let facts: { version: string; cpuUs: number; wallUs: number } | undefined;
  try {
    if (systems.some((s) => s !== "echomq-w6")) servers.plain = await startServer({ aof: false });
    if (systems.includes("echomq-w6"))
      servers.module = await startServer({ aof: false, module: modulePath() });
    for (const s of [servers.plain, servers.module]) if (s) live.servers.add(s);
    for (let r = 1; r <= cfg.rounds && !live.stopping; r++) {
      for (const system of systems) {
        const server = (system === "echomq-w6" ? servers.module : servers.plain)!;
        try {
          const late = await oneRound(system, server, cfg);
          rounds.set(system, [...(rounds.get(system) ?? []), late]);
          const sorted = [...late].sort((a, b) => a - b);
          process.stderr.write(
            `[lateness] round ${r}/${cfg.rounds} ${system}: p50 ${quantile(sorted, 0.5)} ms, p99 ${quantile(sorted, 0.99)} ms\n`,
          );
        } catch (err) {
          if (live.stopping) break;
          failures.push(`lateness: ${system} round ${r}: ${(err as Error).message}`);
        }
      }
    }
    if (servers.module) facts = await moduleFacts(servers.module);
  } finally {
    for (const server of [servers.plain, servers.module]) {
      if (!server) continue;
      await server.stop();
      live.servers.delete(server);
    }
  }
  const rows: LatenessRow[] = [];
  for (const system of systems) {
    const list = (rounds.get(system) ?? []).map((late) => [...late].sort((a, b) => a - b));
    if (list.length === 0) continue;
    const stat = (p: number) => round(median(list.map((sorted) => quantile(sorted, p))), 1);
    rows.push({
      system,
      timers: TIMERS[system as (typeof SYSTEMS)[number]],
      p50Ms: stat(0.5),
      p99Ms: stat(0.99),
      maxMs: stat(1),
      ...(system === "echomq-w6" && facts
        ? { longestTickCpuUs: facts.cpuUs, longestTickUs: facts.wallUs }
        : {}),
    });
  }
  return { config: cfg, ...(facts ? { moduleVersion: facts.version } : {}), rows };
}

/** The lateness measure's table, for the report. */
export function renderLateness(report: LatenessReport): string[] {
  const { config: c, rows } = report;
  const out = [
    `## Delayed-job lateness (${c.rounds} round${c.rounds === 1 ? "" : "s"})`,
    "",
    `${c.jobs} jobs added one at a time every ${c.spacingMs} ms, each due ${c.delayMs[0]}–${c.delayMs[1]} ms later; ` +
      `one worker at concurrency ${c.concurrency}. Lateness = the handler's start − the due instant (client clock), ` +
      "so it includes the hand-over to the worker. Medians over the rounds.",
    "",
    "| system | who promotes | p50 ms | p99 ms | max ms | longest server tick (CPU / wall) |",
    "|---|---|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const tick = r.longestTickCpuUs === undefined ? "" : `${r.longestTickCpuUs} / ${r.longestTickUs} µs`;
    out.push(`| ${LABELS[r.system]} | ${r.timers} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${tick} |`);
  }
  return out;
}

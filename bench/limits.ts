/**
 * The limits measure: a rate-limited queue's throughput and what its claims cost. On the bench's
 * own single nodes (no persistence), each round runs EchoMQ wire 4 and wire 6 (`queue.setLimits({
 * rate: { max, durationMs } })`, enforced inside the claim) and BullMQ (its open-source `limiter:
 * { max, duration }` worker option) on a backlog larger than the window lets through. One worker
 * at `concurrency`; jobs started in `seconds` from the first start are counted (the rate, and how
 * close it is to `max / durationMs`), and the server's commands and CPU over that span are charged
 * to those jobs (what a limited queue costs per job: its claims, the polls or waits of held-back
 * slots). BullMQ has no open-source group limits (its groups are in BullMQ Pro), so the group
 * rows run EchoMQ only: one group limited to a tenth of the rate beside an unlimited group.
 */
import { Redis as IOValkey } from "iovalkey";
import { createIORedisClient, Queue as BullQueue, RedisConnection, Worker as BullWorker } from "bullmq";
import { connect, Queue, Worker } from "echomq";
import { installModuleBrand } from "echomq/admin";
import { modulePath } from "../tools/module-path.js";
import { live } from "./fork.js";
import { Admin, type BenchServer, delta, sleep, startServer } from "./server.js";
import { median, round } from "./stats.js";
import { LABELS, type SystemId } from "./systems/types.js";

RedisConnection.clientFactory = (opts) => createIORedisClient(new IOValkey(opts as never)) as never;

interface LimitsConfig {
  rounds: number;
  /** The rate: `max` jobs per `durationMs`. */
  max: number;
  durationMs: number;
  /** How long a round counts starts (s). */
  seconds: number;
  concurrency: number;
}

export function limitsConfig(smoke: boolean): LimitsConfig {
  const full: LimitsConfig = { rounds: 3, max: 200, durationMs: 1000, seconds: 5, concurrency: 20 };
  return smoke ? { ...full, rounds: 1, max: 50, seconds: 2 } : full;
}

const SYSTEMS = ["echomq-w4", "echomq-w6", "bullmq"] as const;
const NAME = "bench-limited";

interface LimitsRow {
  system: SystemId;
  /** `queue` (the queue's rate) or `group` (one group limited beside an unlimited one). */
  kind: "queue" | "group";
  /** Medians over the rounds. */
  jobsPerSecond: number;
  /** Observed rate ÷ the limit (%); for `group`, the limited group's. */
  ofLimitPct: number;
  commandsPerJob: number;
  serverCpuUsPerJob: number;
  /** `group` rows: the unlimited group's jobs per second while it ran (its whole backlog). */
  otherJobsPerSecond?: number;
}

export interface LimitsReport {
  config: LimitsConfig;
  rows: LimitsRow[];
}

interface Round {
  started: number;
  commands: number;
  cpuSeconds: number;
  /** Group rounds: the unlimited group's jobs started in the span, and its rate while it ran. */
  other?: number;
  otherPerSecond?: number;
}

/** One worker on `server` runs `handler` until `seconds` after its first start. */
async function timed(
  server: BenchServer,
  cfg: LimitsConfig,
  start: (onStart: (group?: string) => void) => Promise<() => Promise<void>>,
): Promise<Round> {
  const admin = await new Admin(server.port).open();
  try {
    const starts: number[] = [];
    const others: number[] = [];
    const stop = await start((group) => (group === "free" ? others : starts).push(Date.now()));
    try {
      const deadline = Date.now() + 30_000;
      while (starts.length === 0 && Date.now() < deadline) await sleep(2);
      if (starts.length === 0) throw new Error("no job started");
      const t0 = starts[0]!;
      const before = await admin.sample();
      await sleep(Math.max(0, t0 + cfg.seconds * 1000 - Date.now()));
      const after = await admin.sample();
      const d = delta(before, after);
      const count = (list: number[]) => list.filter((t) => t < t0 + cfg.seconds * 1000).length;
      const span = others.length > 1 ? (others.at(-1)! - others[0]!) / 1000 : 0;
      return {
        started: count(starts),
        commands: d.commands,
        cpuSeconds: d.cpuSeconds,
        other: count(others),
        otherPerSecond: span > 0 ? others.length / span : 0,
      };
    } finally {
      await stop();
    }
  } finally {
    await admin.close();
  }
}

/** The backlog: enough jobs that the limit, not the queue, is what runs out. */
const backlog = (cfg: LimitsConfig) =>
  Math.ceil((cfg.max * (cfg.seconds * 1000 + 2 * cfg.durationMs)) / cfg.durationMs);

async function echomqRound(
  server: BenchServer,
  wire: 4 | 6,
  cfg: LimitsConfig,
  grouped: boolean,
): Promise<Round> {
  const target = { host: server.host, port: server.port, wire } as const;
  if (wire === 6) await installModuleBrand(target);
  const conn = await connect(target);
  const queue = new Queue(NAME, conn);
  const n = backlog(cfg);
  if (grouped) {
    // One group limited to a tenth of the rate; the other group unlimited, as many jobs.
    await queue.setGroupLimits("tenant", {
      rate: { max: Math.max(1, cfg.max / 10), durationMs: cfg.durationMs },
    });
    for (let i = 0; i < n; i += 500) {
      const jobs = Array.from({ length: Math.min(500, n - i) }, (_, k) => ({
        payload: (i + k) % 2 === 0 ? "tenant" : "free",
        opts: { group: (i + k) % 2 === 0 ? "tenant" : "free" },
      }));
      await queue.addBulk(jobs);
    }
  } else {
    await queue.setLimits({ rate: { max: cfg.max, durationMs: cfg.durationMs } });
    for (let i = 0; i < n; i += 500) {
      await queue.addBulk(Array.from({ length: Math.min(500, n - i) }, () => ({ payload: "x" })));
    }
  }
  try {
    return await timed(server, cfg, async (onStart) => {
      const worker = new Worker(queue, (job) => void onStart(grouped ? job.text() : undefined), {
        concurrency: cfg.concurrency,
        keepCompleted: 0,
        logger: { warn: () => {} },
      });
      return () => worker.close();
    });
  } finally {
    await conn.close();
  }
}

async function bullmqRound(server: BenchServer, cfg: LimitsConfig): Promise<Round> {
  const connection = { host: server.host, port: server.port };
  const queue = new BullQueue(NAME, { connection, defaultJobOptions: { removeOnComplete: true } });
  await queue.waitUntilReady();
  const n = backlog(cfg);
  for (let i = 0; i < n; i += 500) {
    await queue.addBulk(Array.from({ length: Math.min(500, n - i) }, () => ({ name: "j", data: {} })));
  }
  try {
    return await timed(server, cfg, async (onStart) => {
      const worker = new BullWorker(NAME, async () => void onStart(), {
        connection,
        concurrency: cfg.concurrency,
        limiter: { max: cfg.max, duration: cfg.durationMs },
      });
      return () => worker.close();
    });
  } finally {
    await queue.close();
  }
}

export async function runLimitsMeasure(
  cfg: LimitsConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<LimitsReport> {
  const systems = SYSTEMS.filter((s) => only.includes(s));
  const plans: [SystemId, "queue" | "group"][] = [
    ...systems.map((s) => [s, "queue"] as [SystemId, "queue"]),
    ...systems.filter((s) => s !== "bullmq").map((s) => [s, "group"] as [SystemId, "group"]),
  ];
  const servers: { plain?: BenchServer; module?: BenchServer } = {};
  const rounds = new Map<string, Round[]>();
  try {
    if (systems.some((s) => s !== "echomq-w6")) servers.plain = await startServer({ aof: false });
    if (systems.includes("echomq-w6"))
      servers.module = await startServer({ aof: false, module: modulePath() });
    for (const s of [servers.plain, servers.module]) if (s) live.servers.add(s);
    for (let r = 1; r <= cfg.rounds && !live.stopping; r++) {
      for (const [system, kind] of plans) {
        const server = (system === "echomq-w6" ? servers.module : servers.plain)!;
        try {
          const admin = await new Admin(server.port).open();
          await admin.flush().finally(() => admin.close());
          const got =
            system === "bullmq"
              ? await bullmqRound(server, cfg)
              : await echomqRound(server, system === "echomq-w4" ? 4 : 6, cfg, kind === "group");
          rounds.set(`${system}/${kind}`, [...(rounds.get(`${system}/${kind}`) ?? []), got]);
          process.stderr.write(
            `[limits] round ${r}/${cfg.rounds} ${system} ${kind}: ${round(got.started / cfg.seconds, 1)} jobs/s, ` +
              `${round(got.commands / Math.max(1, got.started), 2)} commands/job\n`,
          );
        } catch (err) {
          if (live.stopping) break;
          failures.push(`limits: ${system} ${kind} round ${r}: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    for (const server of [servers.plain, servers.module]) {
      if (!server) continue;
      await server.stop();
      live.servers.delete(server);
    }
  }
  const rows: LimitsRow[] = [];
  const limitPerSecond = (cfg.max * 1000) / cfg.durationMs;
  for (const [system, kind] of plans) {
    const list = rounds.get(`${system}/${kind}`) ?? [];
    if (list.length === 0) continue;
    const m = (f: (r: Round) => number, digits = 1) => round(median(list.map(f)), digits);
    const limit = kind === "group" ? Math.max(1, cfg.max / 10) * (1000 / cfg.durationMs) : limitPerSecond;
    rows.push({
      system,
      kind,
      jobsPerSecond: m((r) => r.started / cfg.seconds),
      ofLimitPct: m((r) => (100 * r.started) / cfg.seconds / limit),
      commandsPerJob: m((r) => r.commands / Math.max(1, r.started + (r.other ?? 0)), 2),
      serverCpuUsPerJob: m((r) => (r.cpuSeconds * 1e6) / Math.max(1, r.started + (r.other ?? 0))),
      ...(kind === "group" ? { otherJobsPerSecond: m((r) => r.otherPerSecond ?? 0, 0) } : {}),
    });
  }
  return { config: cfg, rows };
}

/** The limits measure's table, for the report. */
export function renderLimits(report: LimitsReport): string[] {
  const { config: c, rows } = report;
  const out = [
    `## Rate-limited queues (${c.rounds} round${c.rounds === 1 ? "" : "s"})`,
    "",
    `A backlog on one queue limited to ${c.max} jobs per ${c.durationMs} ms; one worker at concurrency ` +
      `${c.concurrency}; jobs started in the ${c.seconds} s from the first start. Commands and server CPU over ` +
      "that span are charged to the jobs started in it. Group rows (EchoMQ only: BullMQ's group limits are " +
      `in its paid Pro edition): half the backlog in a group limited to ${Math.max(1, c.max / 10)} per ` +
      `${c.durationMs} ms, half in an unlimited group. Medians over the rounds.`,
    "",
    "| system | limit | jobs/s | of the limit | unlimited group jobs/s | commands/job | server CPU µs/job |",
    "|---|---|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    const limit = r.kind === "queue" ? "queue rate (BullMQ: `limiter`)" : "one group's rate";
    const other = r.otherJobsPerSecond === undefined ? "" : String(r.otherJobsPerSecond);
    out.push(
      `| ${LABELS[r.system]} | ${limit} | ${r.jobsPerSecond} | ${r.ofLimitPct}% | ${other} | ${r.commandsPerJob} | ${r.serverCpuUsPerJob} |`,
    );
  }
  return out;
}

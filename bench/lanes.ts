/**
 * The lanes measure: one hot queue on a local cluster of 3 primaries, with `lanes: 1` (the queue
 * lives in one slot, on one shard) and `lanes: 12` (4 lanes per shard), on both EchoMQ wires.
 * The queue is filled while paused, one worker process per shard starts on it, then the queue is
 * resumed: jobs/s from the resume to the last worker seeing it empty, and each primary's server
 * CPU over that window (INFO cpu) — its µs per job and its share of the three. On one 2-core box
 * the three servers share two cores, so throughput cannot grow with the lanes; the per-shard CPU
 * is what projects to machines: with a core per shard, the busiest shard bounds the server side.
 */
import { connect, Queue } from "echomq";
import { installModuleBrand } from "echomq/admin";
import { startCluster } from "../test/support/cluster.js";
import { modulePath } from "../tools/module-path.js";
import type { LanesChildPlan, LanesChildResult } from "./lanes-child.js";
import { jobData } from "./load.js";
import { live, runChild } from "./fork.js";
import { Admin, sleep } from "./server.js";
import { median, round } from "./stats.js";

interface LanesConfig {
  rounds: number;
  /** Jobs the queue holds when it is resumed. */
  jobs: number;
  /** The lane counts compared. */
  lanes: number[];
  /** One worker process per shard, each at this concurrency. */
  concurrency: number;
}

export function lanesConfig(smoke: boolean): LanesConfig {
  const full: LanesConfig = { rounds: 3, jobs: 60_000, lanes: [1, 12], concurrency: 50 };
  return smoke ? { ...full, rounds: 1, jobs: 1200 } : full;
}

interface LanesRow {
  system: "echomq-w4" | "echomq-w6";
  lanes: number;
  /** Medians over the rounds. */
  jobsPerSec: number;
  serverCpuUsPerJob: number;
  /** Each primary's µs per processed job, primaries in slot order. */
  shardCpuUsPerJob: number[];
  /** Each primary's part of the three's server CPU. */
  shares: number[];
  /** 1e6 ÷ the busiest primary's µs per job: the server side's bound with a core per shard. */
  serverBoundJobsPerSec: number;
}

export interface LanesReport {
  config: LanesConfig;
  rows: LanesRow[];
}

const SHARDS = 3;
const QUEUE = "hot";

async function cpuSeconds(admins: Admin[]): Promise<number[]> {
  return Promise.all(admins.map(async (a) => (await a.sample()).cpuSeconds));
}

/** Wake subscriptions of the queue's first lane (one per worker) on any primary. */
async function workersUp(admins: Admin[]): Promise<number> {
  let n = 0;
  for (const a of admins) {
    n += String(await a.client.call("CLIENT", "LIST"))
      .split("\n")
      // the name carries the worker's announcement after the queue (`emq-wake-<queue>%;i=…`)
      .filter(
        (l) => l.includes(` name=emq-wake-${QUEUE} `) || l.includes(` name=emq-wake-${QUEUE}%;`),
      ).length;
  }
  return n;
}

async function runOnce(
  wire: 4 | 6,
  lanes: number,
  cfg: LanesConfig,
  nodes: { host: string; port: number }[],
  admins: Admin[],
): Promise<{ jobsPerSec: number; shardUs: number[] }> {
  for (const a of admins) await a.flush();
  if (wire === 6) await installModuleBrand({ nodes });
  const conn = await connect({ nodes, wire });
  const queue = new Queue(QUEUE, conn, { lanes });
  await queue.pause();
  for (let i = 0; i < cfg.jobs; i += 2000) {
    const batch = Array.from({ length: Math.min(2000, cfg.jobs - i) }, () => ({
      payload: JSON.stringify(jobData()),
    }));
    await queue.addBulk(batch);
  }
  const system = wire === 4 ? "echomq-w4" : "echomq-w6";
  const plan: LanesChildPlan = {
    kind: "lanes",
    system,
    wire,
    nodes,
    queue: QUEUE,
    lanes,
    concurrency: cfg.concurrency,
    timeoutMs: 120_000,
  };
  const children = Array.from({ length: SHARDS }, () => runChild<LanesChildResult>(plan, 150_000));
  const deadline = Date.now() + 60_000;
  while ((await workersUp(admins)) < SHARDS) {
    if (Date.now() > deadline) throw new Error("lanes: the workers did not start within 60 s");
    await sleep(50);
  }
  const before = await cpuSeconds(admins);
  const t0 = Date.now();
  await queue.resume();
  const results = await Promise.all(children);
  const after = await cpuSeconds(admins);
  await conn.close();
  const processed = results.reduce((n, r) => n + r.processed, 0);
  if (processed < cfg.jobs)
    throw new Error(`lanes ${lanes} (${system}): ${processed} of ${cfg.jobs} processed`);
  const seconds = (Math.max(...results.map((r) => r.finishedAt)) - t0) / 1000;
  return {
    jobsPerSec: processed / seconds,
    shardUs: after.map((s, i) => ((s - before[i]!) * 1e6) / processed),
  };
}

export async function runLanesMeasure(cfg: LanesConfig, failures: string[]): Promise<LanesReport> {
  const rows: LanesRow[] = [];
  for (const wire of [4, 6] as const) {
    const cluster = await startCluster({
      primaries: SHARDS,
      ...(wire === 6 ? { module: modulePath() } : {}),
    });
    live.servers.add(cluster);
    // Primaries in slot order (shard A owns slot 0): the owners of the three slices' middles.
    const primaries = [1, 3, 5].map((sixth) => cluster.ownerOf(Math.floor((sixth * 16384) / 6)));
    const admins = await Promise.all(primaries.map((p) => new Admin(p.port).open()));
    const nodes = primaries.map((p) => ({ host: p.host, port: p.port }));
    try {
      for (const lanes of cfg.lanes) {
        const runs: { jobsPerSec: number; shardUs: number[] }[] = [];
        for (let r = 0; r < cfg.rounds && !live.stopping; r++) {
          try {
            runs.push(await runOnce(wire, lanes, cfg, nodes, admins));
            const last = runs.at(-1)!;
            process.stderr.write(
              `[lanes] wire ${wire} lanes ${lanes} round ${r + 1}/${cfg.rounds}: ${round(last.jobsPerSec / 1000)}k jobs/s, ` +
                `shards ${last.shardUs.map((u) => round(u)).join(" / ")} µs/job\n`,
            );
          } catch (err) {
            failures.push(`lanes: ${(err as Error).message}`);
          }
        }
        if (runs.length === 0) continue;
        const shardUs = Array.from({ length: SHARDS }, (_, i) => median(runs.map((x) => x.shardUs[i]!)));
        const total = shardUs.reduce((a, b) => a + b, 0);
        rows.push({
          system: wire === 4 ? "echomq-w4" : "echomq-w6",
          lanes,
          jobsPerSec: round(median(runs.map((x) => x.jobsPerSec)), 0),
          serverCpuUsPerJob: round(total),
          shardCpuUsPerJob: shardUs.map((u) => round(u)),
          shares: shardUs.map((u) => round(total > 0 ? u / total : 0, 3)),
          serverBoundJobsPerSec: round(1e6 / Math.max(...shardUs), 0),
        });
      }
    } finally {
      await Promise.all(admins.map((a) => a.close()));
      await cluster.stop();
      live.servers.delete(cluster);
    }
  }
  return { config: cfg, rows };
}

/** The lanes measure's table for the report. */
export function renderLanes(report: LanesReport): string[] {
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const k = (x: number) => `${round(x / 1000)}k`;
  return [
    `## One hot queue on a 3-primary cluster: lanes 1 vs ${report.config.lanes.at(-1)} (${report.config.rounds} rounds)`,
    "",
    `${report.config.jobs} jobs in one queue, filled paused; one worker process per shard (concurrency ${report.config.concurrency}); ` +
      "jobs/s from the resume to the queue empty; server CPU per processed job from INFO cpu of each primary (shards in slot order).",
    "",
    "| system | lanes | jobs/s | server µs/job, sum | per shard (µs/job) | shares A / B / C | server bound, a core per shard (jobs/s) |",
    "|---|---:|---:|---:|---|---|---:|",
    ...report.rows.map(
      (r) =>
        `| ${r.system === "echomq-w4" ? "EchoMQ wire 4" : "EchoMQ wire 6"} | ${r.lanes} | ${k(r.jobsPerSec)} | ${r.serverCpuUsPerJob} | ` +
        `${r.shardCpuUsPerJob.join(" / ")} | ${r.shares.map(pct).join(" / ")} | ${k(r.serverBoundJobsPerSec)} |`,
    ),
  ];
}

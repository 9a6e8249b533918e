/**
 * The cluster measure's orchestrator: local clusters of `shards` primaries on this machine (plain
 * nodes for EchoMQ wire 4 and BullMQ, module nodes for wire 6, branded by the adapter after every
 * flush), `queuesPerShard` queues per shard chosen by the slot of their name, and one plain and
 * one module node for the same queues as the baseline. Each system and round runs in a child of
 * its own (bench/cluster-measure.ts): both topologies, their order alternated by round. Medians
 * over the rounds; bee-queue has no cluster support and is not run.
 */
import { queueKey, slot } from "echomq/protocol";
import { type LocalCluster, startCluster } from "../test/support/cluster.js";
import { modulePath } from "../tools/module-path.js";
import type {
  ClusterChildPlan,
  ClusterChildResult,
  ClusterTopologyPlan,
  TopologyRun,
} from "./cluster-measure.js";
import { live, runChild } from "./fork.js";
import type { ClusterConfig } from "./modes.js";
import { Admin, type BenchServer, sleep, startServer } from "./server.js";
import { median, round } from "./stats.js";
import { CLUSTER_SYSTEMS, type ClusterSystemId } from "./systems/multi-queue.js";
import type { Endpoint, SystemId } from "./systems/types.js";
import { LABELS } from "./systems/types.js";

const NO_CLUSTER_SUPPORT =
  "bee-queue has no cluster support (its client, node-redis 3, has no cluster mode, and its keys carry no hashtag): not run";

/** One topology's medians over the rounds. */
export interface TopologySummary {
  rounds: number;
  fill: number;
  process: number;
  readyMs: number;
  /** Summed over the primaries. */
  serverCpuUsPerJob: number;
  commandsPerJob: number;
  workerCpuUsPerJob: number;
  /** Each primary's part of the summed server CPU, by shard (median per shard). */
  shares: number[];
  /** Each primary's CPU ÷ every processed job, by shard (µs). */
  shardCpuUsPerJob: number[];
  /** The busiest primary's CPU per processed job (median of each round's busiest, µs). */
  busiestShardCpuUsPerJob: number;
  /**
   * What the server side alone could carry with a core per primary: 1e6 ÷ the busiest primary's
   * µs per job (a bound, not a measured rate: the clients must scale out too).
   */
  serverBoundJobsPerSec: number;
}

export interface ClusterSummary {
  system: ClusterSystemId;
  label: string;
  node: TopologySummary | null;
  cluster: TopologySummary | null;
}

export interface ClusterReport {
  config: ClusterConfig;
  systems: ClusterSystemId[];
  /** Systems asked for that the measure does not run, and why. */
  notRun: Partial<Record<SystemId, string>>;
  /** The clusters: each primary, its slot ranges and the queues placed on it. */
  clusters: {
    kind: "plain" | "module";
    primaries: { node: string; slots: [number, number][]; queues: string[] }[];
  }[];
  /** The module's version (EMQ.VERSION on a module primary), when wire 6 ran. */
  moduleVersion?: string;
  /** Server CPU of the idle cluster (cron, cluster bus), summed over its primaries, ms per second. */
  idleCpuMsPerSec: Partial<Record<"plain" | "module", number>>;
  rounds: ClusterChildResult[];
  summary: ClusterSummary[];
  wallSeconds: number;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

interface Placed {
  cluster: LocalCluster;
  primaries: Endpoint[];
  /** Each primary's slot ranges ([first, last], inclusive), from `ownerOf` over every slot. */
  ranges: [number, number][][];
  /** Queue names, `queuesPerShard` per primary, primary by primary. */
  queues: string[];
  shardOf: number[];
}

/**
 * The first `perShard` names `c<n>` whose slot each primary owns; primaries in slot order (read
 * through `ownerOf` only, the stable part of test/support/cluster.ts).
 */
function place(cluster: LocalCluster, perShard: number): Placed {
  type Primary = ReturnType<LocalCluster["primaries"]>[number];
  const primaries: Primary[] = [];
  const ranges: [number, number][][] = [];
  for (let at = 0; at < 16384; at++) {
    const owner = cluster.ownerOf(at);
    let i = primaries.indexOf(owner);
    if (i < 0) {
      i = primaries.push(owner) - 1;
      ranges.push([]);
    }
    const own = ranges[i]!;
    const last = own.at(-1);
    if (last && last[1] === at - 1) last[1] = at;
    else own.push([at, at]);
  }
  const byShard: string[][] = primaries.map(() => []);
  for (let n = 0; byShard.some((q) => q.length < perShard); n++) {
    if (n > 100_000) throw new Error("cannot place the cluster measure's queues");
    const name = `c${n}`;
    const shard = primaries.indexOf(cluster.ownerOf(slot(queueKey(name, ""))));
    if (byShard[shard]!.length < perShard) byShard[shard]!.push(name);
  }
  return {
    cluster,
    primaries: primaries.map((p) => ({ host: p.host, port: p.port })),
    ranges,
    queues: byShard.flat(),
    shardOf: byShard.flatMap((q, i) => q.map(() => i)),
  };
}

/** Server CPU (user + sys) the idle primaries spend, summed, in ms per second. */
async function idleCpu(primaries: Endpoint[], ms: number): Promise<number> {
  const admins = await Promise.all(primaries.map((p) => new Admin(p.port).open()));
  try {
    const before = await Promise.all(admins.map((a) => a.sample()));
    await sleep(ms);
    const after = await Promise.all(admins.map((a) => a.sample()));
    const cpu = after.reduce((s, a, i) => s + a.cpuSeconds - before[i]!.cpuSeconds, 0);
    return round((cpu * 1000) / (ms / 1000), 2);
  } finally {
    await Promise.all(admins.map((a) => a.close()));
  }
}

async function moduleVersion(node: Endpoint): Promise<string> {
  const admin = await new Admin(node.port).open();
  try {
    return String(((await admin.client.call("EMQ.VERSION")) as unknown[])[3]);
  } finally {
    await admin.close();
  }
}

function summarizeTopology(runs: TopologyRun[]): TopologySummary | null {
  if (runs.length === 0) return null;
  const m = (f: (r: TopologyRun) => number) => median(runs.map(f));
  const shards = runs[0]!.shards.length;
  const busiest = m((r) => Math.max(...r.shards.map((s) => s.cpuUsPerJob)));
  return {
    rounds: runs.length,
    fill: m((r) => r.fill.rate),
    process: m((r) => r.process.rate),
    readyMs: m((r) => r.readyMs),
    serverCpuUsPerJob: m((r) => r.serverCpuUsPerJob),
    commandsPerJob: m((r) => r.commandsPerJob),
    workerCpuUsPerJob: m((r) => r.workerCpuUsPerJob),
    shares: Array.from({ length: shards }, (_, i) => m((r) => r.shards[i]?.share ?? Number.NaN)),
    shardCpuUsPerJob: Array.from({ length: shards }, (_, i) =>
      m((r) => r.shards[i]?.cpuUsPerJob ?? Number.NaN),
    ),
    busiestShardCpuUsPerJob: busiest,
    serverBoundJobsPerSec: round(1e6 / busiest, 0),
  };
}

function summarizeCluster(systems: ClusterSystemId[], rounds: ClusterChildResult[]): ClusterSummary[] {
  return systems.map((system) => {
    const runs = rounds.filter((r) => r.system === system).flatMap((r) => r.runs);
    return {
      system,
      label: LABELS[system],
      node: summarizeTopology(runs.filter((r) => r.topology === "node")),
      cluster: summarizeTopology(runs.filter((r) => r.topology === "cluster")),
    };
  });
}

function brief(r: ClusterChildResult): string {
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  return r.runs
    .map(
      (t) =>
        `${t.topology} fill ${k(t.fill.rate)}/s process ${k(t.process.rate)}/s, server ${t.serverCpuUsPerJob} µs/job` +
        (t.shards.length > 1
          ? ` (shares ${t.shards.map((s) => `${Math.round(s.share * 100)}%`).join("/")})`
          : ""),
    )
    .join("; ");
}

interface ClusterRunOptions {
  smoke: boolean;
  /** Systems asked for (`--only`); those without cluster support are noted and skipped. */
  only: SystemId[];
}

/** Runs the cluster measure; every failure (a job not completed, a child that failed) goes to `failures`. */
export async function runClusterMeasure(
  config: ClusterConfig,
  opts: ClusterRunOptions,
  failures: string[],
  warnings: string[],
): Promise<ClusterReport> {
  const started = performance.now();
  const systems = CLUSTER_SYSTEMS.filter((s) => opts.only.includes(s));
  const notRun: Partial<Record<SystemId, string>> = {};
  if (opts.only.includes("beequeue")) notRun.beequeue = NO_CLUSTER_SUPPORT;
  const report: ClusterReport = {
    config,
    systems,
    notRun,
    clusters: [],
    idleCpuMsPerSec: {},
    rounds: [],
    summary: [],
    wallSeconds: 0,
  };
  const stoppable: { stop(): Promise<void> }[] = [];
  const start = async <T extends { stop(): Promise<void> }>(p: Promise<T>): Promise<T> => {
    const s = await p;
    stoppable.push(s);
    live.servers.add(s);
    return s;
  };
  try {
    const kinds = [
      ...(systems.some((s) => s !== "echomq-w6") ? (["plain"] as const) : []),
      ...(systems.includes("echomq-w6") ? (["module"] as const) : []),
    ];
    const placed: Partial<Record<"plain" | "module", Placed>> = {};
    const nodes: Partial<Record<"plain" | "module", BenchServer>> = {};
    for (const kind of kinds) {
      const module = kind === "module" ? { module: modulePath() } : {};
      const cluster = await start(startCluster({ primaries: config.shards, replicas: 0, ...module }));
      const p = place(cluster, config.queuesPerShard);
      placed[kind] = p;
      if (config.baseline) nodes[kind] = await start(startServer({ aof: false, ...module }));
      report.clusters.push({
        kind,
        primaries: p.primaries.map((e, i) => ({
          node: `${e.host}:${e.port}`,
          slots: p.ranges[i]!,
          queues: p.queues.filter((_, q) => p.shardOf[q] === i),
        })),
      });
      report.idleCpuMsPerSec[kind] = await idleCpu(p.primaries, opts.smoke ? 200 : 1000);
      if (kind === "module") report.moduleVersion = await moduleVersion(p.primaries[0]!);
      log(
        `[cluster] ${kind} cluster: ${p.primaries.map((e) => e.port).join(", ")}, ` +
          `${p.queues.length} queues (${config.queuesPerShard} per shard), idle server CPU ${report.idleCpuMsPerSec[kind]} ms/s`,
      );
    }
    const phaseTimeoutMs = opts.smoke ? 30_000 : 180_000;
    for (let r = 1; r <= config.rounds; r++) {
      const order = systems.map((_, i) => systems[(i + r - 1) % systems.length]!);
      for (const system of order) {
        if (live.stopping) break;
        const kind = system === "echomq-w6" ? "module" : "plain";
        const p = placed[kind]!;
        const node = nodes[kind];
        const cluster: ClusterTopologyPlan = {
          name: "cluster",
          cluster: true,
          nodes: p.primaries,
          primaries: p.primaries,
          shardOf: p.shardOf,
        };
        const topologies: ClusterTopologyPlan[] = [cluster];
        if (node) {
          const one = { host: node.host, port: node.port };
          const single: ClusterTopologyPlan = {
            name: "node",
            cluster: false,
            nodes: [one],
            primaries: [one],
            shardOf: p.queues.map(() => 0),
          };
          // The order of the two alternates by round.
          if (r % 2 === 1) topologies.unshift(single);
          else topologies.push(single);
        }
        const plan: ClusterChildPlan = {
          kind: "cluster",
          system,
          round: r,
          config,
          queues: p.queues,
          topologies,
          phaseTimeoutMs,
        };
        const t0 = performance.now();
        let res: ClusterChildResult;
        try {
          res = await runChild<ClusterChildResult>(plan, opts.smoke ? 120_000 : 600_000);
        } catch (err) {
          if (live.stopping) break;
          failures.push(`[cluster] round ${r} ${(err as Error).message}`);
          log(`[cluster] round ${r} ${system}: FAILED ${(err as Error).message}`);
          continue;
        }
        report.rounds.push(res);
        for (const e of res.errors) failures.push(`[cluster] round ${r} ${system}: ${e}`);
        for (const w of res.warnings) warnings.push(`[cluster] round ${r} ${system}: ${w}`);
        for (const t of topologies) {
          const run = res.runs.find((x) => x.topology === t.name);
          const jobs = p.queues.length * config.jobsPerQueue;
          if (!run || run.completed !== jobs || run.failed > 0)
            failures.push(
              `[cluster] round ${r} ${system}: ${t.name} completed ${run?.completed ?? 0}/${jobs}` +
                (run?.failed ? `, ${run.failed} failed` : ""),
            );
        }
        log(
          `[cluster] round ${r}/${config.rounds} ${system}: ${brief(res)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
        );
      }
    }
  } finally {
    for (const s of stoppable.reverse()) {
      await s.stop().catch(() => {});
      live.servers.delete(s);
    }
  }
  report.summary = summarizeCluster(systems, report.rounds);
  report.wallSeconds = round((performance.now() - started) / 1000, 1);
  return report;
}

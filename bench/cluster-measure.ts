/**
 * The cluster measure inside one system's child process (bench/child.ts): for each topology the
 * orchestrator gives (one node, a cluster), on fresh data (FLUSHALL SYNC on every primary, then
 * the brand for wire 6): the queues filled in turn (batches, a few in flight), the fill checked
 * queue by queue, then one worker per queue processes every job. Charged to the processing: the
 * wall time from the workers' creation to the last completion, INFO cpu and commandstats deltas
 * of every primary (each shard's own and their sum), and this process's CPU.
 */
import { CLOSE_BOUND_MS, jobData, type Rate, rate, withTimeout } from "./load.js";
import type { ClusterConfig } from "./modes.js";
import { Admin, delta, type ServerDelta, type ServerSample } from "./server.js";
import { round } from "./stats.js";
import {
  type ClusterSystemId,
  type MultiAdapter,
  multiAdapterFor,
  type Topology,
} from "./systems/multi-queue.js";
import type { Endpoint } from "./systems/types.js";

export interface ClusterTopologyPlan extends Topology {
  name: "node" | "cluster";
  /** The primaries to sample and flush (a cluster: every primary; one node: that node). */
  primaries: Endpoint[];
  /** Each queue's primary: an index into `primaries`. */
  shardOf: number[];
}

export interface ClusterChildPlan {
  kind: "cluster";
  system: ClusterSystemId;
  round: number;
  config: ClusterConfig;
  queues: string[];
  /** In the order to run them (the orchestrator alternates it by round). */
  topologies: ClusterTopologyPlan[];
  /** Bound of the fill and of the processing, each (ms). */
  phaseTimeoutMs: number;
}

interface ShardRun {
  /** host:port of the primary. */
  node: string;
  queues: number;
  /** Jobs waiting on this shard after the fill (its queues' sum). */
  waiting: number;
  /** This primary's CPU (user + sys) over the processing, ÷ every processed job (µs). */
  cpuUsPerJob: number;
  /** This primary's part of the primaries' summed CPU. */
  share: number;
  /** Commands this primary ran over the processing (commandstats calls, without INFO). */
  commands: number;
}

export interface TopologyRun {
  topology: "node" | "cluster";
  jobs: number;
  fill: Rate;
  /** Processing: jobs ÷ (workers created → last completion). */
  process: Rate;
  completed: number;
  failed: number;
  /** Workers created → every worker ready (ms), inside the processing window. */
  readyMs: number;
  /** Summed over the primaries (µs per processed job). */
  serverCpuUsPerJob: number;
  commandsPerJob: number;
  /** This process's CPU (user + sys) per processed job (µs). */
  workerCpuUsPerJob: number;
  shards: ShardRun[];
}

export interface ClusterChildResult {
  kind: "cluster";
  system: ClusterSystemId;
  round: number;
  settings: Record<string, string>;
  runs: TopologyRun[];
  errors: string[];
  warnings: string[];
  wallSeconds: number;
}

const label = (e: Endpoint) => `${e.host}:${e.port}`;

export async function runClusterChild(plan: ClusterChildPlan): Promise<ClusterChildResult> {
  const t0 = performance.now();
  const result: ClusterChildResult = {
    kind: "cluster",
    system: plan.system,
    round: plan.round,
    settings: {},
    runs: [],
    errors: [],
    warnings: [],
    wallSeconds: 0,
  };
  for (const topology of plan.topologies) {
    const adapter = multiAdapterFor(plan.system, topology);
    result.settings[topology.name] = adapter.settings;
    const admins = topology.primaries.map((p) => new Admin(p.port));
    try {
      await Promise.all(admins.map((a) => a.open()));
      const run = await withTimeout(
        topologyRun(plan, topology, adapter, admins, result),
        2 * plan.phaseTimeoutMs + 2 * CLOSE_BOUND_MS + 10_000,
        `${topology.name}`,
      );
      result.runs.push(run);
    } catch (err) {
      result.errors.push(`${topology.name}: ${(err as Error).stack ?? String(err)}`);
    } finally {
      await Promise.allSettled(admins.map((a) => a.flush()));
      await Promise.allSettled(admins.map((a) => a.close()));
    }
  }
  result.wallSeconds = round((performance.now() - t0) / 1000, 2);
  return result;
}

const sampleAll = (admins: Admin[]): Promise<ServerSample[]> => Promise.all(admins.map((a) => a.sample()));

async function topologyRun(
  plan: ClusterChildPlan,
  topology: ClusterTopologyPlan,
  adapter: MultiAdapter,
  admins: Admin[],
  out: ClusterChildResult,
): Promise<TopologyRun> {
  const { config, queues } = plan;
  const n = queues.length * config.jobsPerQueue;
  const close = async (what: string, closable: { close(): Promise<void> }) => {
    const c0 = performance.now();
    await withTimeout(closable.close(), CLOSE_BOUND_MS, `${topology.name}: ${what} close`).catch((err) => {
      out.errors.push(`${topology.name}: ${what}: close failed: ${(err as Error).message}`);
    });
    const ms = performance.now() - c0;
    if (ms > 1000) out.warnings.push(`${topology.name}: ${what}: close took ${Math.round(ms)} ms`);
  };

  await Promise.all(admins.map((a) => a.flush()));
  await adapter.prepare();

  // The fill: batches taken from the queues in turn, `inFlight` at a time.
  const producer = await adapter.producer(queues);
  let fill: Rate;
  try {
    const batches: [string, number][] = [];
    for (let left = config.jobsPerQueue; left > 0; left -= config.batch)
      for (const q of queues) batches.push([q, Math.min(config.batch, left)]);
    let next = 0;
    const loop = async () => {
      while (next < batches.length) {
        const [q, size] = batches[next++]!;
        await producer.addBulk(
          q,
          Array.from({ length: size }, () => jobData()),
        );
      }
    };
    const f0 = performance.now();
    await withTimeout(
      Promise.all(Array.from({ length: config.inFlight }, loop)),
      plan.phaseTimeoutMs,
      `${topology.name}: fill`,
    );
    fill = rate(n, (performance.now() - f0) / 1000);
  } finally {
    await close("producer", producer);
  }
  const waiting = await adapter.waiting(queues);
  const short = queues.filter((_, i) => waiting[i] !== config.jobsPerQueue);
  if (short.length > 0)
    throw new Error(
      `after the fill ${short.length} queue(s) do not hold ${config.jobsPerQueue} jobs: ` +
        short.map((q) => `${q} ${waiting[queues.indexOf(q)]}`).join(", "),
    );

  // The processing: every queue's worker at once, until every job completed or failed.
  let completed = 0;
  let failed = 0;
  let firstError: unknown;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const before = await sampleAll(admins);
  const cpu0 = process.cpuUsage();
  const p0 = performance.now();
  const consumer = await adapter.consumer(queues, {
    concurrency: config.concurrency,
    onCompleted: () => {
      completed += 1;
      if (completed + failed === n) resolveDone();
    },
    onFailed: (err) => {
      failed += 1;
      firstError ??= err;
      if (completed + failed === n) resolveDone();
    },
  });
  const readyMs = performance.now() - p0;
  let seconds: number;
  let cpu: NodeJS.CpuUsage;
  let server: ServerDelta[];
  try {
    await withTimeout(done, plan.phaseTimeoutMs, `${topology.name}: process`).catch((err) => {
      throw new Error(`${(err as Error).message}: ${completed}/${n} completed, ${failed} failed`);
    });
    seconds = (performance.now() - p0) / 1000;
    cpu = process.cpuUsage(cpu0);
    const after = await sampleAll(admins);
    server = after.map((a, i) => delta(before[i]!, a));
  } finally {
    await close("workers", consumer);
  }
  if (failed > 0) out.errors.push(`${topology.name}: ${failed} failed, first: ${String(firstError)}`);
  const cpuSum = server.reduce((s, d) => s + d.cpuSeconds, 0);
  return {
    topology: topology.name,
    jobs: n,
    fill,
    process: rate(n, seconds),
    completed,
    failed,
    readyMs: round(readyMs, 1),
    serverCpuUsPerJob: round((cpuSum * 1e6) / n, 1),
    commandsPerJob: round(server.reduce((s, d) => s + d.commands, 0) / n, 2),
    workerCpuUsPerJob: round((cpu.user + cpu.system) / n, 1),
    shards: topology.primaries.map((p, i) => {
      const mine = topology.shardOf.flatMap((s, q) => (s === i ? [q] : []));
      return {
        node: label(p),
        queues: mine.length,
        waiting: mine.reduce((s, q) => s + (waiting[q] ?? 0), 0),
        cpuUsPerJob: round((server[i]!.cpuSeconds * 1e6) / n, 1),
        share: round(cpuSum > 0 ? server[i]!.cpuSeconds / cpuSum : Number.NaN, 3),
        commands: server[i]!.commands,
      };
    }),
  };
}

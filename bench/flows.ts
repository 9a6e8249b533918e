/**
 * The flows measure: parents with children in other queues, EchoMQ (wire 4, wire 6: `FlowProducer`,
 * the flow-outbox and the workers' relays) beside BullMQ's open-source `FlowProducer`, each on a
 * fresh bench node of its own (no persistence), in this process. A round adds `flows` flows (one
 * parent in `flow-parent`, `children` children alternating between `flow-a` and `flow-b`),
 * 100 adds in flight, then starts a worker per queue (`concurrency` each, no-op handlers,
 * finished jobs removed: EchoMQ `keepCompleted: 0`, BullMQ `removeOnComplete: true`) and times
 * them until the last parent has completed. Reported: flows added per second, and jobs
 * (parents + children) processed per second — the children's, the relay's and the parents'
 * work together. BullMQ's flows need every queue of a flow in one hashtag on a cluster; this
 * measure runs on one node, where both work.
 */
import { Redis as IOValkey } from "iovalkey";
import {
  FlowProducer as BullFlowProducer,
  createIORedisClient,
  RedisConnection,
  Worker as BullWorker,
} from "bullmq";
import { connect, FlowProducer, Queue, Worker } from "echomq";
import { installModuleBrand } from "echomq/admin";
import { modulePath } from "../tools/module-path.js";
import { live } from "./fork.js";
import { type BenchServer, startServer } from "./server.js";
import { median, round } from "./stats.js";
import type { SystemId } from "./systems/types.js";

RedisConnection.clientFactory = (opts) => createIORedisClient(new IOValkey(opts as never)) as never;

interface FlowsConfig {
  rounds: number;
  flows: number;
  children: number;
  concurrency: number;
}

export function flowsConfig(smoke: boolean): FlowsConfig {
  const full: FlowsConfig = { rounds: 3, flows: 2000, children: 10, concurrency: 50 };
  return smoke ? { ...full, rounds: 1, flows: 100 } : full;
}

interface FlowsRow {
  system: SystemId;
  /** Medians over the rounds. */
  addFlowsPerSec: number;
  jobsPerSec: number;
  flowsPerSec: number;
}

export interface FlowsReport {
  config: FlowsConfig;
  rows: FlowsRow[];
}

const PARENT = "flow-parent";
const KIDS = ["flow-a", "flow-b"];
const IN_FLIGHT = 100;
const TIMEOUT_MS = 300_000;

interface Run {
  addSeconds: number;
  processSeconds: number;
}

async function inFlight(n: number, add: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, n) }, async () => {
      while (next < n) await add(next++);
    }),
  );
}

function untilCount(get: () => number, want: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + TIMEOUT_MS;
    const tick = setInterval(() => {
      if (get() >= want) {
        clearInterval(tick);
        resolve();
      } else if (Date.now() > deadline || live.stopping) {
        clearInterval(tick);
        reject(new Error(`flows: ${what}: ${get()} of ${want} within ${TIMEOUT_MS} ms`));
      }
    }, 5);
  });
}

async function echomqRun(server: BenchServer, wire: 4 | 6, cfg: FlowsConfig): Promise<Run> {
  if (wire === 6) await installModuleBrand({ port: server.port });
  const conn = await connect({ port: server.port, wire });
  try {
    const producer = new FlowProducer(conn);
    const t0 = performance.now();
    await inFlight(cfg.flows, (i) =>
      producer.add({
        queue: PARENT,
        payload: `parent ${i}`,
        children: Array.from({ length: cfg.children }, (_, c) => ({
          queue: KIDS[c % KIDS.length]!,
          payload: `child ${i}.${c}`,
        })),
      }),
    );
    const t1 = performance.now();
    let parents = 0;
    const opts = { concurrency: cfg.concurrency, keepCompleted: 0 };
    const workers = [PARENT, ...KIDS].map((name) => new Worker(new Queue(name, conn), () => {}, opts));
    workers[0]!.on("completed", () => {
      parents += 1;
    });
    await untilCount(() => parents, cfg.flows, "parents completed");
    const t2 = performance.now();
    await Promise.all(workers.map((w) => w.close()));
    return { addSeconds: (t1 - t0) / 1000, processSeconds: (t2 - t1) / 1000 };
  } finally {
    await conn.close();
  }
}

async function bullmqRun(server: BenchServer, cfg: FlowsConfig): Promise<Run> {
  const connection = { host: server.host, port: server.port };
  const producer = new BullFlowProducer({ connection });
  try {
    const opts = { removeOnComplete: true };
    const t0 = performance.now();
    await inFlight(cfg.flows, (i) =>
      producer.add({
        name: "parent",
        queueName: PARENT,
        data: { i },
        opts,
        children: Array.from({ length: cfg.children }, (_, c) => ({
          name: "child",
          queueName: KIDS[c % KIDS.length]!,
          data: { i, c },
          opts,
        })),
      }),
    );
    const t1 = performance.now();
    let parents = 0;
    const workers = [PARENT, ...KIDS].map(
      (name) => new BullWorker(name, async () => {}, { connection, concurrency: cfg.concurrency }),
    );
    workers[0]!.on("completed", () => {
      parents += 1;
    });
    await untilCount(() => parents, cfg.flows, "parents completed");
    const t2 = performance.now();
    await Promise.all(workers.map((w) => w.close()));
    return { addSeconds: (t1 - t0) / 1000, processSeconds: (t2 - t1) / 1000 };
  } finally {
    await producer.close();
  }
}

const SYSTEMS: readonly SystemId[] = ["echomq-w4", "echomq-w6", "bullmq"];

export async function runFlowsMeasure(
  cfg: FlowsConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<FlowsReport> {
  const systems = SYSTEMS.filter((s) => only.includes(s));
  const runs = new Map<SystemId, Run[]>(systems.map((s) => [s, []]));
  for (let r = 0; r < cfg.rounds && !live.stopping; r++) {
    for (const system of systems.map((_, i) => systems[(i + r) % systems.length]!)) {
      const server = await startServer({
        aof: false,
        ...(system === "echomq-w6" ? { module: modulePath() } : {}),
      });
      live.servers.add(server);
      try {
        const run =
          system === "bullmq"
            ? await bullmqRun(server, cfg)
            : await echomqRun(server, system === "echomq-w6" ? 6 : 4, cfg);
        runs.get(system)!.push(run);
        const jobs = cfg.flows * (cfg.children + 1);
        process.stderr.write(
          `[flows] ${system} round ${r + 1}/${cfg.rounds}: add ${round(cfg.flows / run.addSeconds, 0)} flows/s, ` +
            `process ${round(jobs / run.processSeconds, 0)} jobs/s\n`,
        );
      } catch (err) {
        failures.push(`flows (${system}): ${(err as Error).message}`);
      } finally {
        await server.stop();
        live.servers.delete(server);
      }
    }
  }
  const jobs = cfg.flows * (cfg.children + 1);
  const rows = systems.flatMap((system): FlowsRow[] => {
    const done = runs.get(system)!;
    if (done.length === 0) return [];
    const processSeconds = median(done.map((x) => x.processSeconds));
    return [
      {
        system,
        addFlowsPerSec: round(median(done.map((x) => cfg.flows / x.addSeconds)), 0),
        jobsPerSec: round(jobs / processSeconds, 0),
        flowsPerSec: round(cfg.flows / processSeconds, 0),
      },
    ];
  });
  return { config: cfg, rows };
}

const LABEL: Partial<Record<SystemId, string>> = {
  "echomq-w4": "EchoMQ wire 4",
  "echomq-w6": "EchoMQ wire 6",
  bullmq: "BullMQ",
};

/** The flows measure's table for the report. */
export function renderFlows(report: FlowsReport): string[] {
  const { config: c } = report;
  return [
    `## Flows: a parent and ${c.children} children in two other queues (${c.rounds} round${c.rounds === 1 ? "" : "s"})`,
    "",
    `${c.flows} flows added with 100 adds in flight, then one worker per queue (concurrency ${c.concurrency}, no-op handlers, ` +
      "finished jobs removed) until the last parent completed; one node, no persistence, client and workers in one process; medians. " +
      "EchoMQ relays each child's outcome through its queue's outbox (the workers' relays); BullMQ's FlowProducer moves it " +
      "inside its completion script (all of a flow's queues in one hashtag on a cluster).",
    "",
    "| system | flows added/s | jobs processed/s (parents + children) | flows completed/s |",
    "|---|---:|---:|---:|",
    ...report.rows.map(
      (r) => `| ${LABEL[r.system] ?? r.system} | ${r.addFlowsPerSec} | ${r.jobsPerSec} | ${r.flowsPerSec} |`,
    ),
  ];
}

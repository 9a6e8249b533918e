/**
 * The commands that read: `status`, `queues`, `jobs`, `job`, `metrics`.
 */
import type { Cluster, Redis } from "iovalkey";
import type { Connection } from "../connector/connection.js";
import { VERSION_VERB } from "../engine/version.js";
import { isValidQueue, VERSION_KEY } from "../keyspace.js";
import { Metrics } from "../metrics.js";
import { recordedLanes } from "../lanes/registry.js";
import { listQueues } from "../operate/discover.js";
import { listWorkers, workersPerQueue } from "../observe/workers.js";
import { assertJobState } from "../operate/paging.js";
import { type JobCounts, Queue } from "../queue.js";
import { intOption } from "./args.js";
import { type Command, QUEUE } from "./command.js";
import { NotFoundError } from "./errors.js";
import { jobJson, jobsTable, jobText, table } from "./format.js";

const STATES = ["pending", "scheduled", "active", "completed", "dead", "waiting"] as const;

/** Every queue the server holds (a bounded SCAN of every primary) with its counts. */
async function queueRows(conn: Connection) {
  const found = await listQueues(conn);
  // A key whose name breaks the queue-name rule was not written by EchoMQ: not a queue to count.
  const queues = await Promise.all(
    found.queues
      .filter((q) => isValidQueue(q.name))
      .map(async (q) => {
        const counts = (await new Queue(q.name, conn).counts()) as JobCounts;
        const { pending, scheduled, active, completed, dead, waiting, paused } = counts;
        const lanes = Math.max(1, ...(await recordedLanes(conn, q.name)));
        return { name: q.name, lanes, pending, scheduled, active, completed, dead, waiting, paused };
      }),
  );
  return { queues, complete: found.complete, scanned: found.scanned };
}

function nodes(conn: Connection, role: "master" | "all"): Redis[] {
  return conn.cluster ? (conn.client as Cluster).nodes(role) : [conn.client as Redis];
}

/** Workers per queue: their wake subscribers in `CLIENT LIST` on every primary (src/observe/workers.ts). */
async function workersByQueue(conn: Connection): Promise<Map<string, number>> {
  const perQueue = workersPerQueue(await listWorkers(conn));
  return new Map([...perQueue].map(([queue, q]) => [queue, q.workers]));
}

async function serverInfo(node: Redis) {
  const info = String(await node.call("INFO", "server"));
  const field = (k: string) => new RegExp(`^${k}:(.*)$`, "m").exec(info)?.[1]?.trim();
  return {
    address: `${node.options.host}:${node.options.port}`,
    server: field("valkey_version") ? "valkey" : "redis",
    version: field("valkey_version") ?? field("redis_version") ?? "unknown",
  };
}

async function moduleVersion(conn: Connection): Promise<string | null> {
  try {
    const reply = (await conn.send(VERSION_VERB, [])) as unknown[];
    const at = reply.findIndex((v) => String(v) === "module");
    return at === -1 ? null : String(reply[at + 1]);
  } catch {
    return null;
  }
}

const countHeader = ["queue", "lanes", ...STATES, "paused"];
const countRow = (q: Awaited<ReturnType<typeof queueRows>>["queues"][number]) => [
  q.name,
  q.lanes,
  q.pending,
  q.scheduled,
  q.active,
  q.completed,
  q.dead,
  q.waiting,
  q.paused ? "yes" : "no",
];

export const status: Command = {
  name: "status",
  summary: "the server, its brand and wire, the module, every queue with its counts and workers",
  usage: "",
  options: {},
  positionals: [],
  async run(ctx) {
    const conn = await ctx.connection();
    const [servers, brand, module, listing, workers] = await Promise.all([
      Promise.all(nodes(conn, "master").map(serverInfo)),
      conn.send("GET", [VERSION_KEY]),
      moduleVersion(conn),
      queueRows(conn),
      workersByQueue(conn),
    ]);
    const queues = listing.queues.map((q) => ({ ...q, workers: workers.get(q.name) ?? 0 }));
    const json = {
      mode: conn.cluster ? "cluster" : "standalone",
      servers,
      brand: brand == null ? null : String(brand),
      wire: conn.wire,
      module,
      queues,
      scanComplete: listing.complete,
      workers: [...workers.values()].reduce((a, b) => a + b, 0),
    };
    const head = [
      `${json.mode}, ${servers.length} primar${servers.length === 1 ? "y" : "ies"}: ${servers.map((s) => `${s.address} (${s.server} ${s.version})`).join(", ")}`,
      `brand ${json.brand ?? "(none)"}, wire ${json.wire}, module ${module ?? "not loaded"}`,
      `workers connected: ${json.workers}`,
      "",
      table(
        [...countHeader, "workers"],
        queues.map((q) => [...countRow(q), q.workers]),
      ),
    ];
    if (!listing.complete)
      head.push(`(the scan stopped after ${listing.scanned} keys: some queues may be missing)`);
    return { json, text: head.join("\n") };
  },
};

export const queues: Command = {
  name: "queues",
  summary: "every queue (found by a bounded SCAN of each primary) with its counts",
  usage: "",
  options: {},
  positionals: [],
  async run(ctx) {
    const listing = await queueRows(await ctx.connection());
    return {
      json: { queues: listing.queues, scanComplete: listing.complete },
      text: table(countHeader, listing.queues.map(countRow)),
    };
  },
};

export const jobs: Command = {
  name: "jobs",
  summary: "a page of a queue's jobs in one state",
  usage: "<queue> [--state pending|scheduled|active|completed|dead] [--offset n] [--limit n]",
  options: {
    state: { type: "string", value: "<state>", help: "the state to list (default pending)" },
    offset: { type: "string", value: "<n>", help: "jobs skipped (default 0)" },
    limit: { type: "string", value: "<n>", help: "jobs listed, 1 to 1000 (default 50)" },
  },
  positionals: [QUEUE],
  async run(ctx, { values, positionals }) {
    const state = assertJobState(values.state ?? "pending");
    const offset = intOption(values, "offset", 0, 0, 1e15, "jobs")!;
    const limit = intOption(values, "limit", 50, 1, 1000, "jobs")!;
    const queue = new Queue(positionals.queue as string, await ctx.connection());
    const page = await queue.getJobs(state, { offset, limit });
    return {
      json: { queue: queue.name, state, offset, limit, jobs: page.map(jobJson) },
      text: jobsTable(state, page),
    };
  },
};

export const job: Command = {
  name: "job",
  summary: "one job: payload, state, attempts, result, error, progress, logs",
  usage: "<queue> <id>",
  options: {},
  positionals: [QUEUE, { name: "id", required: true }],
  async run(ctx, { positionals }) {
    const queue = new Queue(positionals.queue as string, await ctx.connection());
    const info = await queue.getJob(positionals.id as string);
    if (info === null)
      throw new NotFoundError(`no job ${positionals.id} in queue ${JSON.stringify(queue.name)}`);
    return { json: jobJson(info), text: jobText(info) };
  },
};

export const metrics: Command = {
  name: "metrics",
  summary: "the Prometheus metrics of the server's queues (text format; --json: prom-client's JSON)",
  usage: "[--queue name]...",
  options: {
    queue: {
      type: "string",
      multiple: true,
      value: "<name>",
      help: "a queue to report (default: every queue found)",
    },
  },
  positionals: [],
  async run(ctx, { values }) {
    const conn = await ctx.connection();
    const names =
      (values.queue as string[] | undefined) ?? (await listQueues(conn)).queues.map((q) => q.name);
    const m = new Metrics(conn, { queues: names });
    if (ctx.globals.json) return { json: await m.registry.getMetricsAsJSON(), text: "" };
    return { json: null, text: (await m.text()).trimEnd() };
  },
};

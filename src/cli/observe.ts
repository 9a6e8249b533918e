/**
 * The operator's reads beyond counts: `workers` (who is connected, with concurrency and busy
 * slots: `CLIENT LIST` on every primary), `schedules` (next instants, jobs fired, last fired, paused), `flows` (a
 * parent and its children's states), `groups` (flow control: limits, active and parked per
 * group). Reads only.
 */
import type { Connection } from "../connector/connection.js";
import { isValidQueue } from "../keyspace.js";
import { listWorkers, type WorkerInfo } from "../observe/workers.js";
import { listQueues } from "../operate/discover.js";
import { Queue } from "../queue.js";
import { specText } from "../schedules/options.js";
import { type Command, QUEUE } from "./command.js";
import { NotFoundError } from "./errors.js";
import { bytesJson, isoTime, preview, table } from "./format.js";

const OPTIONAL_QUEUE = { name: "queue", required: false } as const;

const seconds = (ms: number) => `${Math.round(ms / 1000)}s`;

function workerRow(w: WorkerInfo) {
  return [
    w.queue,
    w.host ?? "?",
    w.pid ?? "?",
    w.id ?? "?",
    w.concurrency ?? "?",
    w.busy ?? "?",
    seconds(w.connectedMs),
    seconds(w.idleMs),
    w.node,
  ];
}

export const workers: Command = {
  name: "workers",
  summary: "the workers connected now (of one queue, or all): concurrency, busy slots, last heard from",
  usage: "[<queue>]",
  options: {},
  positionals: [OPTIONAL_QUEUE],
  async run(ctx, { positionals }) {
    const queue = positionals.queue as string | undefined;
    const found = await listWorkers(await ctx.connection(), queue);
    return {
      json: { workers: found },
      text: table(
        ["queue", "host", "pid", "id", "concurrency", "busy", "connected", "idle", "node"],
        found.map(workerRow),
      ),
    };
  },
};

/** The queues named, or every queue the server holds (a bounded SCAN of every primary). */
async function queuesOf(conn: Connection, queue: string | undefined): Promise<string[]> {
  if (queue !== undefined) return [queue];
  const found = await listQueues(conn);
  return found.queues.map((q) => q.name).filter(isValidQueue);
}

export const schedules: Command = {
  name: "schedules",
  summary: "the schedules of a queue (or of every queue), the soonest due first",
  usage: "[<queue>]",
  options: {},
  positionals: [OPTIONAL_QUEUE],
  async run(ctx, { positionals }) {
    const conn = await ctx.connection();
    const names = await queuesOf(conn, positionals.queue as string | undefined);
    const each = await Promise.all(
      names.map(async (name) =>
        (await new Queue(name, conn).schedules()).map((s) => ({ queue: name, ...s })),
      ),
    );
    const due = (s: { next: number; paused: boolean }) => (s.paused ? Number.POSITIVE_INFINITY : s.next);
    const rows = each.flat().sort((a, b) => due(a) - due(b)); // paused ones last
    return {
      json: {
        schedules: rows.map((s) => ({
          queue: s.queue,
          name: s.name,
          next: s.next,
          fired: s.fired,
          lastFired: s.lastFired,
          paused: s.paused,
          spec: s.spec,
          payload: bytesJson(s.payload),
          opts: s.opts,
        })),
      },
      text: table(
        ["queue", "name", "next", "fired", "last fired", "spec", "payload"],
        rows.map((s) => [
          s.queue,
          s.name,
          s.paused ? "paused" : isoTime(s.next),
          s.fired,
          s.lastFired === null ? "-" : isoTime(s.lastFired),
          specText(s.spec),
          preview(s.payload),
        ]),
      ),
    };
  },
};

/** `<child queue>:<child id>` as a parent row records it (an id holds no `:`). */
function splitChild(ref: string): { queue: string; id: string } {
  const at = ref.lastIndexOf(":");
  return { queue: ref.slice(0, at), id: ref.slice(at + 1) };
}

export const flows: Command = {
  name: "flows",
  summary: "a flow's parent: its state, its settled children with their states now, those still to settle",
  usage: "<queue> <id>",
  options: {},
  positionals: [QUEUE, { name: "id", required: true }],
  async run(ctx, { positionals }) {
    const conn = await ctx.connection();
    const queue = new Queue(positionals.queue as string, conn);
    const id = positionals.id as string;
    const [parent, children] = await Promise.all([queue.getJob(id), queue.getChildren(id)]);
    if (parent === null || children === null)
      throw new NotFoundError(`no job ${id} in queue ${JSON.stringify(queue.name)}`);
    const settled = [
      ...Object.entries(children.values).map(([ref, value]) => ({ ref, outcome: "completed", value })),
      ...Object.entries(children.failures).map(([ref, value]) => ({ ref, outcome: "failed", value })),
    ];
    const rows = await Promise.all(
      settled.map(async ({ ref, outcome, value }) => {
        const child = splitChild(ref);
        // The child's own row, if retention kept it: its state now (a retry may have revived it).
        const row = isValidQueue(child.queue) ? await new Queue(child.queue, conn).getJob(child.id) : null;
        return { ...child, outcome, state: row?.state ?? null, value };
      }),
    );
    const json = {
      queue: queue.name,
      id,
      state: parent.state,
      childrenLeft: parent.childrenLeft ?? 0,
      children: rows,
    };
    const head = [
      `${queue.name} ${id}: ${parent.state}, ${json.childrenLeft} child${json.childrenLeft === 1 ? "" : "ren"} still to settle`,
      "",
      table(
        ["queue", "id", "outcome", "state now", "result or error"],
        rows.map((r) => [r.queue, r.id, r.outcome, r.state ?? "(removed)", preview(r.value)]),
      ),
    ];
    return { json, text: head.join("\n") };
  },
};

export const groups: Command = {
  name: "groups",
  summary: "a queue's flow control: its limits, and every group with jobs active or parked",
  usage: "<queue>",
  options: {},
  positionals: [QUEUE],
  async run(ctx, { positionals }) {
    const queue = new Queue(positionals.queue as string, await ctx.connection());
    const [limits, states] = await Promise.all([queue.limits(), queue.groups()]);
    const { groups: own, ...queueLimits } = limits;
    const names = [...new Set([...Object.keys(states), ...Object.keys(own)])].sort();
    const rows = names.map((group) => ({
      group,
      active: states[group]?.active ?? 0,
      parked: states[group]?.parked ?? 0,
      limits: own[group] ?? null,
    }));
    return {
      json: { queue: queue.name, limits: queueLimits, groups: rows },
      text: [
        `${queue.name}: limits ${JSON.stringify(queueLimits)}`,
        "",
        table(
          ["group", "active", "parked", "own limits"],
          rows.map((r) => [r.group, r.active, r.parked, r.limits ? JSON.stringify(r.limits) : "(defaults)"]),
        ),
      ].join("\n"),
    };
  },
};

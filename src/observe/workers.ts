/**
 * The workers connected now, read from `CLIENT LIST` on every node (on a cluster, every primary:
 * a worker's wake subscriber lives on the primary that owns its queue's slot). Each worker's
 * wake subscriber is named with what it announces (`src/observe/worker-name.ts`): its id,
 * concurrency, busy slots, host and pid. Nothing is read from the keyspace and nothing is
 * written: a worker that stops — closed, or its process killed — leaves the list when the server
 * drops its connection. A read; one `CLIENT LIST` per node.
 */
import type { Cluster, Redis } from "iovalkey";
import type { Connection } from "../connector/connection.js";
import { parseWakeClientName } from "./worker-name.js";

/** One connected worker of one queue. */
export interface WorkerInfo {
  queue: string;
  /** The worker's own id (fixed for its life); null for a worker that announces nothing. */
  id: string | null;
  /** Its slots; null when not announced. */
  concurrency: number | null;
  /** Slots running a handler, as last announced (sent on change, at most once a second). */
  busy: number | null;
  host: string | null;
  pid: number | null;
  /** The node its wake subscriber is connected to (`host:port` as dialled). */
  node: string;
  /** The subscriber's address as the node sees it (`CLIENT LIST`'s `addr`). */
  addr: string;
  /** How long its socket has been connected (ms; whole seconds, `CLIENT LIST`'s `age`). */
  connectedMs: number;
  /**
   * Since the node last heard from it (ms; whole seconds, `CLIENT LIST`'s `idle`): a name sent
   * on a change, else the ping its lease heartbeat sends every third of its lease. Much longer
   * than that: its process is alive but not running its timers.
   */
  idleMs: number;
  /** When the node last heard from it: now − `idleMs` (ms since the epoch, this host's clock). */
  lastSeenAt: number;
}

/** The nodes to ask: every primary of a cluster, or the one node. */
function primaries(conn: Connection): Redis[] {
  return conn.cluster ? (conn.client as Cluster).nodes("master") : [conn.client as Redis];
}

/** `CLIENT LIST`'s `key=value` fields of one line. */
function fieldsOf(line: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const pair of line.trim().split(" ")) {
    const eq = pair.indexOf("=");
    if (eq > 0) fields.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return fields;
}

/** The workers one node's `CLIENT LIST` reply names. */
function workersInClientList(list: string, node: string, now = Date.now()): WorkerInfo[] {
  const workers: WorkerInfo[] = [];
  for (const line of list.split("\n")) {
    if (!line.includes(" name=emq-wake-")) continue;
    const fields = fieldsOf(line);
    const parsed = parseWakeClientName(fields.get("name") ?? "");
    if (!parsed) continue;
    const a = parsed.announced;
    const idleMs = Number(fields.get("idle") ?? 0) * 1000;
    workers.push({
      queue: parsed.queue,
      id: a?.id ?? null,
      concurrency: a?.concurrency ?? null,
      busy: a?.busy ?? null,
      host: a?.host ?? null,
      pid: a?.pid ?? null,
      node,
      addr: fields.get("addr") ?? "",
      connectedMs: Number(fields.get("age") ?? 0) * 1000,
      idleMs,
      lastSeenAt: now - idleMs,
    });
  }
  return workers;
}

/**
 * Every worker connected now (of `queue` only, when given), sorted by queue, host, pid and id.
 * A node that does not answer `CLIENT LIST` rejects the read (a list missing a node's workers
 * would read as workers gone).
 */
export async function listWorkers(conn: Connection, queue?: string): Promise<WorkerInfo[]> {
  const nodes = primaries(conn);
  const lists = await Promise.all(nodes.map((n) => n.call("CLIENT", "LIST")));
  const now = Date.now();
  const workers = lists.flatMap((list, i) =>
    workersInClientList(String(list), `${nodes[i]!.options.host}:${nodes[i]!.options.port}`, now),
  );
  const key = (w: WorkerInfo) => [w.queue, w.host ?? "", String(w.pid ?? 0).padStart(10, "0"), w.id ?? ""];
  return workers
    .filter((w) => queue === undefined || w.queue === queue)
    .sort((x, y) => {
      const [a, b] = [key(x), key(y)];
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
      return 0;
    });
}

/** Workers per queue, with their slots summed (a queue's figures for a list of queues). */
export interface QueueWorkers {
  queue: string;
  workers: number;
  /** Summed over the workers that announce it. */
  concurrency: number;
  busy: number;
}

/** Per queue, from `listWorkers`' rows. */
export function workersPerQueue(workers: readonly WorkerInfo[]): Map<string, QueueWorkers> {
  const out = new Map<string, QueueWorkers>();
  for (const w of workers) {
    const q = out.get(w.queue) ?? { queue: w.queue, workers: 0, concurrency: 0, busy: 0 };
    q.workers += 1;
    q.concurrency += w.concurrency ?? 0;
    q.busy += w.busy ?? 0;
    out.set(w.queue, q);
  }
  return out;
}

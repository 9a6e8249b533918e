/**
 * Finding the queues a server holds, by a bounded `SCAN` of its keys (on a cluster, of every
 * primary's): a queue exists while one of its sorted sets (`waiting` included: a queue that holds
 * only flow parents waiting for their children is a queue; `repeats` too: a queue that holds only
 * schedules is one) or its `meta` does. There is no registry
 * to keep in step — a registry key would live in one slot, and no transition could write it on a
 * cluster — so a listing costs a walk over the keyspace: `SCAN … COUNT 1000`, one round trip per
 * thousand keys (every job row is a key), stopped after `maxKeys` keys with `complete: false`.
 * The lanes of a laned queue are listed under it.
 */
import type { Cluster, Redis } from "iovalkey";
import type { Connection } from "../connector/connection.js";
import { KEY_CLOSE, KEY_HEAD, type QueueKeyType, queueKey } from "../keyspace.js";
import { laneNames } from "../lanes/naming.js";
import { checkKeys } from "../option-keys.js";

export interface QueueListing {
  /** The queue's name (a laned queue's own name, not a lane's). */
  name: string;
  /** The physical queues found for it: the queue itself, or its lanes. */
  physical: string[];
}

export interface Discovery {
  queues: QueueListing[];
  /** Keys the scan walked over (every node). */
  scanned: number;
  /** False when the scan stopped at `maxKeys` before the end: some queues may be missing. */
  complete: boolean;
}

const SETS = new Set<QueueKeyType>([
  "pending",
  "schedule",
  "active",
  "done",
  "dead",
  "waiting",
  "repeats",
  "meta",
]);
const LANE = /^(.+)@(\d+)\.(\d+)\.\d+$/;

/** The queue name and type of `emq:{<name>}:<type>` (the base's text from the data), or null for any other key. */
export function parseQueueKey(key: string): { name: string; type: string } | null {
  if (!key.startsWith(KEY_HEAD)) return null;
  const close = key.indexOf(KEY_CLOSE, KEY_HEAD.length);
  if (close === -1) return null;
  return { name: key.slice(KEY_HEAD.length, close), type: key.slice(close + KEY_CLOSE.length) };
}

/** A physical queue's queue: the laned queue it is a lane of (by the naming rule), or itself. */
export function queueOfPhysical(physical: string): string {
  const m = LANE.exec(physical);
  if (!m) return physical;
  const [, base, k, i] = m;
  try {
    return laneNames(base!, Number(k))[Number(i)] === physical ? base! : physical;
  } catch {
    return physical;
  }
}

function nodesOf(conn: Connection): Redis[] {
  return conn.cluster ? (conn.client as Cluster).nodes("master") : [conn.client as Redis];
}

/** The queues of every primary, grouped (lanes under their queue), sorted by name. */
export async function listQueues(conn: Connection, opts: { maxKeys?: number } = {}): Promise<Discovery> {
  checkKeys(opts, { of: "listQueues", keys: { maxKeys: "number" } });
  const maxKeys = opts.maxKeys ?? 1_000_000;
  const physical = new Set<string>();
  let scanned = 0;
  let complete = true;
  for (const node of nodesOf(conn)) {
    let cursor = "0";
    do {
      const [next, keys] = (await node.scanBuffer(
        cursor,
        "MATCH",
        `${KEY_HEAD}*${KEY_CLOSE}*`,
        "COUNT",
        1000,
      )) as [Buffer, Buffer[]];
      cursor = next.toString();
      scanned += keys.length;
      for (const raw of keys) {
        const parsed = parseQueueKey(raw.toString("utf8"));
        if (parsed && SETS.has(parsed.type as QueueKeyType)) physical.add(parsed.name);
      }
      if (scanned >= maxKeys && cursor !== "0") {
        complete = false;
        break;
      }
    } while (cursor !== "0");
    if (!complete) break;
  }
  const grouped = new Map<string, string[]>();
  for (const p of physical) {
    const name = queueOfPhysical(p);
    grouped.set(name, [...(grouped.get(name) ?? []), p]);
  }
  const queues = [...grouped]
    .map(([name, lanes]) => ({ name, physical: lanes.sort() }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { queues, scanned, complete };
}

/**
 * Whether the server holds queue `name`: one of its sets or its `meta` exists (the test
 * `listQueues` applies, for one name: one `EXISTS` on its slot). A laned queue records its lanes
 * in its own `meta`, so its name alone answers.
 */
export async function queueExists(conn: Connection, name: string): Promise<boolean> {
  const keys = [...SETS].map((type) => queueKey(name, type));
  return Number(await conn.send("EXISTS", keys, keys[0])) > 0;
}

/**
 * A flow parent's children that have not settled yet. The parent's row counts them (`children`)
 * but names only those settled (`child:` and `failed:` fields); an unsettled child names its
 * parent in its own row (`parent` = `<queue>` NUL `<id>`). So they are found by a bounded scan:
 * the states a child waits or runs in (pending, scheduled, active, waiting — a child that is a
 * parent itself) of the queues the dashboard lists, the parent's own queue first, at most
 * `SCAN_QUEUES` queues and `SCAN_PER_SET` jobs of each set; it stops when every unsettled child
 * was found. Each set's ids and their rows' `parent` are read in one round (pipelined).
 */
import type { Connection } from "../connector/connection.js";
import { text } from "../jobs/common.js";
import { keyOf, queueKey } from "../keyspace.js";

/** Queues scanned at most, and jobs read of each set. */
const SCAN_QUEUES = 50;
const SCAN_PER_SET = 200;
const SETS = [
  ["pending", "pending"],
  ["scheduled", "schedule"],
  ["active", "active"],
  ["waiting", "waiting"],
] as const;

interface UnsettledChild {
  queue: string;
  id: string;
  state: string;
}

export interface UnsettledScan {
  children: UnsettledChild[];
  /** Jobs whose row was read, and queues whose sets were. */
  scanned: number;
  queues: number;
  /** True when the scan read every job of every queue the dashboard lists. */
  complete: boolean;
}

/**
 * The unsettled children of `parent` (queue `parentQueue`), at most `left` of them, among the
 * queues `listed` (each with its physical queues: the queue itself, or its lanes).
 */
export async function unsettledChildren(
  conn: Connection,
  parentQueue: string,
  parentId: string,
  left: number,
  listed: readonly { name: string; physical: string[] }[],
): Promise<UnsettledScan> {
  const want = `${parentQueue}\u0000${parentId}`;
  const own = listed.find((q) => q.name === parentQueue) ?? { name: parentQueue, physical: [parentQueue] };
  const order = [own, ...listed.filter((q) => q.name !== parentQueue)];
  const found: UnsettledChild[] = [];
  let scanned = 0;
  let complete = order.length <= SCAN_QUEUES;
  let queues = 0;
  for (const q of order.slice(0, SCAN_QUEUES)) {
    if (found.length >= left) break;
    queues += 1;
    for (const lane of q.physical) {
      const sets = await Promise.all(
        SETS.map(async ([, suffix]) => {
          const key = queueKey(lane, suffix);
          return (await conn.send("ZRANGE", [key, 0, SCAN_PER_SET], key)) as Buffer[];
        }),
      );
      const rows = SETS.flatMap(([state], i) => {
        const ids = sets[i]!.map((b) => text(b));
        if (ids.length > SCAN_PER_SET) complete = false;
        return ids.slice(0, SCAN_PER_SET).map((id) => ({ state, id }));
      });
      const parents = await Promise.all(
        rows.map(({ id }) => conn.send("HGET", [keyOf(lane, "row", id), "parent"])),
      );
      scanned += rows.length;
      rows.forEach((r, i) => {
        const p = parents[i];
        if (p !== null && p !== undefined && text(p as Buffer) === want)
          found.push({ queue: q.name, id: r.id, state: r.state });
      });
    }
  }
  if (found.length >= left) complete = true;
  return { children: found.slice(0, left), scanned, queues, complete };
}

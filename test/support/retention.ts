/**
 * Reading and ageing a queue's finished jobs for the retention tests: the ids of `done` / `dead`,
 * a finish time moved back (so which jobs are "older" does not depend on the machine's speed),
 * and the `cleaned` events of its bus. Every call goes to the node that holds the queue.
 */
import type { Connection } from "../../src/index.js";
import { queueKey } from "../../src/keyspace.js";

/** The ids of a finished set (`done` or `dead`), oldest first. */
export async function finished(conn: Connection, queue: string, set: "done" | "dead"): Promise<string[]> {
  const ids = (await conn.send("ZRANGE", [queueKey(queue, set), 0, -1], queueKey(queue, set))) as Buffer[];
  return ids.map(String);
}

/** Moves the finish time of `ids` back by `agoMs` from the server's now. */
export async function finishedAgo(
  conn: Connection,
  queue: string,
  set: "done" | "dead",
  ids: readonly string[],
  agoMs: number,
): Promise<void> {
  const key = queueKey(queue, set);
  const [s, us] = ((await conn.send("TIME", [], key)) as Buffer[]).map((b) => Number(String(b))) as [
    number,
    number,
  ];
  const at = s * 1000 + Math.floor(us / 1000) - agoMs;
  await conn.send("ZADD", [key, "XX", ...ids.flatMap((id) => [at, id])], key);
}

/** The counts of the `cleaned` events on the queue's bus, by state, in order. */
export async function cleaned(conn: Connection, queue: string): Promise<string[]> {
  const key = queueKey(queue, "events");
  const entries = (await conn.send("XRANGE", [key, "-", "+"], key)) as [Buffer, Buffer[]][];
  return entries
    .map(([, fields]) => {
      const f = fields.map(String);
      const get = (name: string) => f[f.indexOf(name) + 1];
      return f[f.indexOf("event") + 1] === "cleaned" ? `${get("state")}:${get("count")}` : undefined;
    })
    .filter((e): e is string => e !== undefined);
}

/**
 * Seeded queues and keyspace snapshots: a queue with jobs in every state (so a call that got
 * past its refusal would have something to change), and per-key digests to tell, afterwards,
 * whether anything under them was written.
 */
import type { Redis } from "iovalkey";
import { type Connection, Queue } from "../../src/index.js";
import { jobKey, fail, complete, claim } from "../../src/protocol.js";
import { whereAre } from "./common.js";

/** A seeded job: its id, the set it is in, its lease token (attempts). */
export interface SeedJob {
  id: string;
  state: "pending" | "schedule" | "active" | "done" | "dead";
  token: number;
}

/**
 * Seeds queue `q` through the public API: 6 pending, 4 scheduled (an hour away), 4 active
 * (leased for an hour), 3 completed, 3 dead. Returns its jobs.
 */
export async function seedQueue(conn: Connection, q: string): Promise<SeedJob[]> {
  const queue = new Queue(q, conn);
  await queue.addBulk(Array.from({ length: 16 }, (_, i) => ({ payload: `seed ${i}` })));
  await queue.addBulk(Array.from({ length: 4 }, () => ({ payload: "later", opts: { delay: 3_600_000 } })));
  const leased = [];
  for (let i = 0; i < 10; i++) {
    const job = await claim(conn, q, 3_600_000);
    if (job) leased.push(job);
  }
  for (const job of leased.slice(0, 3)) await complete(conn, q, job.id, job.attempts, "r", 100);
  for (const job of leased.slice(3, 6))
    await fail(conn, q, job.id, job.attempts, "e", { backoffMs: 0, maxAttempts: 1, keep: 100 });
  const jobs: SeedJob[] = [];
  for (const [id, set] of await whereAre(conn, q)) {
    const attempts = Number(await conn.send("HGET", [jobKey(q, id), "attempts"]));
    jobs.push({ id, state: set as SeedJob["state"], token: attempts });
  }
  return jobs;
}

/** key → `DEBUG DIGEST-VALUE` of every key of `r`'s database that `keep` admits. */
export async function digests(r: Redis, keep: (key: string) => boolean): Promise<Map<string, string>> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await r.scan(cursor, "COUNT", 1000);
    cursor = next;
    for (const k of batch) if (keep(k)) keys.push(k);
  } while (cursor !== "0");
  const out = new Map<string, string>();
  for (let i = 0; i < keys.length; i += 200) {
    const chunk = keys.slice(i, i + 200);
    const values = (await r.call("DEBUG", "DIGEST-VALUE", ...chunk)) as string[];
    chunk.forEach((k, j) => {
      out.set(k, String(values[j]));
    });
  }
  return out;
}

/** Keys whose digest changed, that appeared, or that went away. */
export function diff(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) changed.push(k);
  for (const k of before.keys()) if (!after.has(k)) changed.push(k);
  return changed;
}

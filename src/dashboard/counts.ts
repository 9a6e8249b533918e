/**
 * A queue's counts as the dashboard's sampler reads them: per physical queue (the queue, or each
 * of its lanes, as discovery found them) six `ZCARD`s and an `HGET`, sent in the caller's tick so
 * that every queue's reads of one sample leave together — one pipelined round per shard.
 */
import type { Connection } from "../connector/connection.js";
import { queueKey } from "../keyspace.js";
import type { JobCounts } from "../queue.js";

const SETS = ["pending", "schedule", "active", "done", "dead", "waiting"] as const;

/** The counts of a queue over its physical queues, summed; paused when every one is. */
export async function readCounts(conn: Connection, physical: readonly string[]): Promise<JobCounts> {
  const each = await Promise.all(
    physical.map(async (p) => {
      const replies = await Promise.all([
        ...SETS.map((s) => conn.send("ZCARD", [queueKey(p, s)])),
        conn.send("HGET", [queueKey(p, "meta"), "paused"]),
      ]);
      return replies;
    }),
  );
  const sum: JobCounts = {
    pending: 0,
    scheduled: 0,
    active: 0,
    completed: 0,
    dead: 0,
    waiting: 0,
    paused: each.length > 0,
  };
  for (const [pending, scheduled, active, completed, dead, waiting, paused] of each) {
    sum.pending += Number(pending);
    sum.scheduled += Number(scheduled);
    sum.active += Number(active);
    sum.completed += Number(completed);
    sum.dead += Number(dead);
    sum.waiting += Number(waiting);
    sum.paused &&= paused != null && String(paused) === "1";
  }
  return sum;
}

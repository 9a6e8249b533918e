/**
 * A queue's counts per state: one pipelined round of `ZCARD`s and the pause flag per queue (or
 * lane), and a laned queue's sums over its lanes.
 */
import type { Connection } from "../connector/connection.js";
import { queueKey } from "../keyspace.js";

export interface JobCounts {
  pending: number;
  scheduled: number;
  active: number;
  completed: number;
  dead: number;
  /** Flow parents waiting for their children. */
  waiting: number;
  paused: boolean;
}

/** A laned queue's counts: the sums, and each lane's own (lanes of recorded counts included). */
export interface LanedCounts extends JobCounts {
  /** True when any lane is paused (`paused`: every lane is). */
  partlyPaused: boolean;
  lanes: Record<string, JobCounts>;
}

const SETS = ["pending", "schedule", "active", "done", "dead", "waiting"] as const;
const STATES = ["pending", "scheduled", "active", "completed", "dead", "waiting"] as const;

/** One queue's (or lane's) counts. */
export async function countsOf(conn: Connection, queue: string): Promise<JobCounts> {
  const [pending, scheduled, active, completed, dead, waiting, paused] = await Promise.all([
    ...SETS.map((s) => conn.send("ZCARD", [queueKey(queue, s)])),
    conn.send("HGET", [queueKey(queue, "meta"), "paused"]),
  ]);
  return {
    pending: Number(pending),
    scheduled: Number(scheduled),
    active: Number(active),
    completed: Number(completed),
    dead: Number(dead),
    waiting: Number(waiting),
    paused: paused != null && String(paused) === "1",
  };
}

/** The sums over `lanes`, and each lane's own counts. */
export async function lanedCounts(conn: Connection, lanes: readonly string[]): Promise<LanedCounts> {
  const each = await Promise.all(lanes.map((lane) => countsOf(conn, lane)));
  const sum: LanedCounts = {
    pending: 0,
    scheduled: 0,
    active: 0,
    completed: 0,
    dead: 0,
    waiting: 0,
    paused: each.every((c) => c.paused),
    partlyPaused: each.some((c) => c.paused),
    lanes: {},
  };
  each.forEach((c, i) => {
    for (const state of STATES) sum[state] += c[state];
    sum.lanes[lanes[i]!] = c;
  });
  return sum;
}

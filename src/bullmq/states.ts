/**
 * BullMQ's job states over EchoMQ's sets: `wait` (or `waiting`, as asked) and `prioritized` are
 * the `pending` jobs of priority 0 and above it — paused or not, as in BullMQ 6, whose `paused`
 * holds nothing —, `delayed` is `schedule`, `completed` `done`, `failed` `dead`,
 * `waiting-children` `waiting`. Reads only.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { jobKey, type QueueKeyType, queueKey } from "../keyspace.js";
import { type JobInfo, jobInfo, type JobState } from "../operate/row.js";

export const BULLMQ_STATES = [
  "wait",
  "waiting",
  "prioritized",
  "paused",
  "delayed",
  "active",
  "completed",
  "failed",
  "waiting-children",
] as const;

export type BullMQState = (typeof BULLMQ_STATES)[number];

/** Each state's set, and the score range it takes of it (`pending` is split by priority). */
const SETS: Record<BullMQState, { set: QueueKeyType; min: string; max: string }> = {
  wait: { set: "pending", min: "-inf", max: "0" },
  waiting: { set: "pending", min: "-inf", max: "0" },
  paused: { set: "pending", min: "1", max: "0" }, // never read: BullMQ 6 keeps no paused jobs
  prioritized: { set: "pending", min: "(0", max: "+inf" },
  delayed: { set: "schedule", min: "-inf", max: "+inf" },
  active: { set: "active", min: "-inf", max: "+inf" },
  completed: { set: "done", min: "-inf", max: "+inf" },
  failed: { set: "dead", min: "-inf", max: "+inf" },
  "waiting-children": { set: "waiting", min: "-inf", max: "+inf" },
};

/** BullMQ's name of a row's state (`unknown` for no row). */
export function stateOf(info: JobInfo | null): BullMQState | "unknown" {
  if (info === null) return "unknown";
  const names: Record<JobState, BullMQState> = {
    pending: info.priority > 0 ? "prioritized" : "wait",
    scheduled: "delayed",
    active: "active",
    completed: "completed",
    dead: "failed",
    waiting: "waiting-children",
  };
  return names[info.state] ?? "unknown";
}

/** BullMQ 6's states when none is named. */
const ALL: readonly BullMQState[] = [
  "active",
  "completed",
  "delayed",
  "failed",
  "prioritized",
  "waiting",
  "waiting-children",
];

/** The states asked, each once, as named (all of BullMQ 6's when none is). */
export function statesOf(types: readonly unknown[]): BullMQState[] {
  const asked = types.flat().length === 0 ? ALL : [...new Set(types.flat())];
  for (const t of asked)
    if (!(BULLMQ_STATES as readonly unknown[]).includes(t))
      throw new InvalidArgumentError("type", `must be one of ${BULLMQ_STATES.join(", ")}, got ${String(t)}`);
  return asked as BullMQState[];
}

export async function isPausedQueue(conn: Connection, queue: string): Promise<boolean> {
  const paused = await conn.send("HGET", [queueKey(queue, "meta"), "paused"]);
  return paused != null && String(paused) === "1";
}

/** How many jobs are in `state` (`paused`: none, as in BullMQ 6). */
export async function countOf(conn: Connection, queue: string, state: BullMQState): Promise<number> {
  if (state === "paused") return 0;
  const { set, min, max } = SETS[state];
  return Number(await conn.send("ZCOUNT", [queueKey(queue, set), min, max]));
}

/** The ids of `state` from `start` to `end` (inclusive; −1 the last), newest first unless `asc`. */
export async function idsOf(
  conn: Connection,
  queue: string,
  state: BullMQState,
  start: number,
  end: number,
  asc: boolean,
): Promise<{ id: string; score: number }[]> {
  if (state === "paused") return [];
  const { set, min, max } = SETS[state];
  const count = end < 0 ? -1 : end - start + 1;
  if (count === 0 || start < 0) return [];
  const range = asc ? [min, max] : [max, min];
  const args = [
    queueKey(queue, set),
    ...range,
    "BYSCORE",
    ...(asc ? [] : ["REV"]),
    "LIMIT",
    String(start),
    String(count),
    "WITHSCORES",
  ];
  const reply = (await conn.send("ZRANGE", args)) as Buffer[];
  const out: { id: string; score: number }[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2)
    out.push({ id: String(reply[i]), score: Number(String(reply[i + 1])) });
  return out;
}

/** A job's row, or null. */
export async function rowOf(conn: Connection, queue: string, id: string): Promise<JobInfo | null> {
  const reply = (await conn.send("HGETALL", [jobKey(queue, id)])) as Record<string, Buffer>;
  return jobInfo(id, queue, reply);
}

/** The id an idempotency key (a BullMQ jobId) holds, or null. */
export async function idOfKey(conn: Connection, queue: string, key: string): Promise<string | null> {
  const id = await conn.send("GET", [queueKey(queue, `key:${key}`)]);
  return id == null ? null : String(id);
}

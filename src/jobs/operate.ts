/**
 * Host steps of the operator verbs: `expedite` (a scheduled job runs now), `updateData` (one
 * job's payload replaced), `clean` (finished jobs older than a grace period), `drain` (waiting
 * jobs) and `obliterate` (the whole queue).
 * Each is one bounded call (`limit` ids at most); the `Queue` methods call again until done.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertValidQueue, keyOf } from "../keyspace.js";
import { assertLabel, isLabel } from "./add-options.js";
import {
  assertInteger,
  assertJobId,
  assertPayload,
  key,
  MAX_INTEGER,
  MAX_LIMIT,
  type Payload,
  toArg,
} from "./common.js";
import { call } from "./calls.js";

/**
 * Releases an idempotency key before its ttl (`FORGET`): the next add with it adds a new job.
 * True when the key was held.
 */
export async function forgetKey(conn: Connection, queue: string, idemKey: string): Promise<boolean> {
  assertValidQueue(queue);
  assertLabel("key", idemKey);
  return (await call(conn, "FORGET", queue, [idemKey])) === 1;
}

/** Glob characters escaped, so a `SCAN … MATCH` pattern matches `text` literally. */
function literal(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Releases every idempotency key the queue holds: a `SCAN` of the records on the node that
 * serves the queue (reads), then `FORGET` for each. Returns how many were released.
 */
export async function forgetAllKeys(conn: Connection, queue: string): Promise<number> {
  assertValidQueue(queue);
  const prefix = keyOf(queue, "record");
  const pattern = `${literal(prefix)}*`;
  let cursor = "0";
  let released = 0;
  do {
    const [next, found] = (await conn.send(
      "SCAN",
      [cursor, "MATCH", pattern, "COUNT", "1000"],
      key(queue, ""),
    )) as [Buffer, Buffer[]];
    cursor = next.toString();
    for (const record of found) {
      const idemKey = record.subarray(Buffer.byteLength(prefix)).toString("utf8");
      // Only names an add can make (a record written by hand under another name is left).
      if (!isLabel(idemKey)) continue;
      if (await forgetKey(conn, queue, idemKey)) released++;
    }
  } while (cursor !== "0");
  return released;
}

/** The finished states `clean` deletes from: `completed` (the set `done`) or `dead`. */
export type FinishedState = "completed" | "dead";

/** A scheduled job goes to `pending` now (its due time is dropped); wakes one worker slot. */
export async function expedite(conn: Connection, queue: string, id: string): Promise<void> {
  assertValidQueue(queue);
  assertJobId(id);
  await call(conn, "EXPEDITE", queue, [id]);
}

/**
 * Replaces job `id`'s payload (`UPDATE`), in any state — no lease token: any process may. The
 * attempts that start from now on read it; a running handler keeps the payload it was given.
 * No such job: `JobNotFoundError`.
 */
export async function updateData(
  conn: Connection,
  queue: string,
  id: string,
  payload: Payload,
): Promise<void> {
  assertValidQueue(queue);
  assertJobId(id);
  assertPayload(payload);
  await call(conn, "UPDATE", queue, [id, toArg(payload)], id);
}

export function assertFinishedState(state: unknown): FinishedState {
  if (state !== "completed" && state !== "dead") {
    throw new InvalidArgumentError(
      "state",
      `must be "completed" or "dead", got ${typeof state === "string" ? JSON.stringify(state) : typeof state}`,
    );
  }
  return state;
}

/**
 * Deletes up to `limit` jobs of `state` that finished at least `graceMs` ago (server time), the
 * oldest first; returns how many.
 */
export async function clean(
  conn: Connection,
  queue: string,
  state: FinishedState,
  graceMs: number,
  limit: number,
): Promise<number> {
  assertValidQueue(queue);
  assertFinishedState(state);
  assertInteger("olderThanMs", graceMs, 0, MAX_INTEGER, " of milliseconds");
  assertInteger("limit", limit, 1, MAX_LIMIT);
  return (await call(conn, "CLEAN", queue, [state, String(graceMs), String(limit)])) as number;
}

/** Deletes up to `limit` waiting jobs (pending first, then scheduled); returns how many. */
export async function drain(conn: Connection, queue: string, limit: number): Promise<number> {
  assertValidQueue(queue);
  assertInteger("limit", limit, 1, MAX_LIMIT);
  return (await call(conn, "DRAIN", queue, [String(limit)])) as number;
}

export interface ObliterateStep {
  /** Jobs this call deleted. */
  deleted: number;
  /** Jobs the queue's sets still hold; `0`: the queue is gone (its `meta` and stream too). */
  left: number;
}

/**
 * Deletes up to `limit` of the queue's jobs; the call that empties its sets also deletes its
 * `meta` and events stream. Without `force` it refuses while a job is active
 * (`QueueActiveError`).
 */
export async function obliterate(
  conn: Connection,
  queue: string,
  force: boolean,
  limit: number,
): Promise<ObliterateStep> {
  assertValidQueue(queue);
  if (typeof force !== "boolean")
    throw new InvalidArgumentError("force", `must be a boolean, got ${typeof force}`);
  assertInteger("limit", limit, 1, MAX_LIMIT);
  const [deleted, left] = (await call(conn, "OBLITERATE", queue, [force ? "1" : "0", String(limit)])) as [
    number,
    number,
  ];
  return { deleted: Number(deleted), left: Number(left) };
}

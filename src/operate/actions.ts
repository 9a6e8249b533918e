/**
 * The operator's bulk actions over a queue's lanes (a plain queue: one lane, itself): each a loop
 * of bounded transitions (`CLEAN`, `DRAIN`, `OBLITERATE`: at most `batch` ids per call), so the
 * server never runs one long command, however large the queue.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError, QueueActiveError } from "../errors.js";
import { clean, drain, type FinishedState, forgetAllKeys, obliterate, pause } from "../jobs.js";
import { MAX_LIMIT } from "../jobs/common.js";
import { queueKey } from "../keyspace.js";
import { checkKeys, type KeyType } from "../option-keys.js";

/** Ids per call of the bulk verbs. */
const BATCH = 1000;

export interface CleanOptions {
  /** Only jobs that finished at least this long ago (ms, server time). Default 0: all. */
  olderThanMs?: number;
  /** Delete at most this many jobs in all (default: no bound; each call takes at most 1,000). */
  limit?: number;
}

/** The options of `clean`, checked. */
export function cleanOptions(opts: CleanOptions | undefined): { graceMs: number; limit: number } {
  const keys = { olderThanMs: "number", limit: "number" } satisfies Record<keyof CleanOptions, KeyType>;
  checkKeys(opts, { of: "clean", keys, foreign: { grace: "olderThanMs" } });
  const graceMs = opts?.olderThanMs ?? 0;
  const limit = opts?.limit ?? Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw new InvalidArgumentError(
      "olderThanMs",
      `must be a non-negative integer of milliseconds, got ${String(graceMs)}`,
    );
  }
  if (limit !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new InvalidArgumentError("limit", `must be a positive integer, got ${String(limit)}`);
  }
  return { graceMs, limit };
}

/** `CLEAN` on each lane until it finds no more, or `limit` are deleted; returns how many. */
export async function cleanLanes(
  conn: Connection,
  lanes: readonly string[],
  state: FinishedState,
  graceMs: number,
  limit: number,
): Promise<number> {
  let total = 0;
  for (const lane of lanes) {
    for (;;) {
      const batch = Math.min(BATCH, MAX_LIMIT, limit - total);
      if (batch <= 0) return total;
      const n = await clean(conn, lane, state, graceMs, batch);
      total += n;
      if (n < batch) break;
    }
  }
  return total;
}

/** `DRAIN` on each lane until it leaves no waiting job; returns how many were deleted. */
export async function drainLanes(conn: Connection, lanes: readonly string[]): Promise<number> {
  let total = 0;
  for (const lane of lanes) {
    for (;;) {
      const n = await drain(conn, lane, BATCH);
      total += n;
      if (n < BATCH) break;
    }
  }
  return total;
}

/**
 * Deletes every job of every lane, then their `meta` and streams; `queue` itself last (its
 * `meta` records the lane counts). Without `force`, refuses first when a job is active
 * (`QueueActiveError`, nothing written); then pauses every lane, so no claim starts while the
 * batches run. Returns how many jobs were deleted.
 */
export async function obliterateLanes(
  conn: Connection,
  queue: string,
  lanes: readonly string[],
  force: boolean,
): Promise<number> {
  if (typeof force !== "boolean")
    throw new InvalidArgumentError("force", `must be a boolean, got ${typeof force}`);
  const order = [...lanes.filter((l) => l !== queue), queue];
  if (!force) {
    const active = await Promise.all(order.map((l) => conn.send("ZCARD", [queueKey(l, "active")])));
    const n = active.reduce<number>((sum, a) => sum + Number(a), 0);
    if (n > 0) {
      const error = new QueueActiveError("ERR EMQ.OBLITERATE queue has active jobs");
      error.message = `obliterate(): queue ${JSON.stringify(queue)} has ${n} active job${n === 1 ? "" : "s"}: close its workers first, or pass { force: true } to delete running jobs too`;
      throw error;
    }
  }
  await Promise.all(order.map((l) => pause(conn, l)));
  let total = 0;
  for (const lane of order) {
    for (;;) {
      const step = await obliterate(conn, lane, force, BATCH);
      total += step.deleted;
      if (step.left === 0) break;
    }
    await forgetAllKeys(conn, lane);
  }
  return total;
}

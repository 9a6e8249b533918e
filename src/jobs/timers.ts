/**
 * The `timers` family's host steps (module/src/verbs/timers.rs on the native side): `promote`
 * (due scheduled jobs to `pending`) and `reap` (expired leases back to `pending` or `dead`) — the
 * work the server's own timers do on wire 6 and the worker's housekeeping does on wire 4.
 */
import type { Connection } from "../connector/connection.js";
import { assertValidQueue } from "../keyspace.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import { assertInteger, MAX_INTEGER, MAX_LIMIT, text } from "./common.js";
import { call } from "./calls.js";

export interface ReapOptions {
  /** At most this many expired leases per call (1 to 10000). */
  limit: number;
  /** Attempts before a reaped job is dead (a row's own `maxAttempts` wins). */
  maxAttempts: number;
  /** How many ids `dead` keeps; 0 deletes the row of a job that dies. */
  keep: number;
}

export interface ReapResult {
  /** Ids back in `pending`. */
  requeued: string[];
  /** Ids that exhausted their attempts (in `dead`, or deleted when keep is 0). */
  dead: string[];
}

const REAP_OPTIONS: OptionTable = {
  of: "reap",
  keys: { limit: "number", maxAttempts: "number", keep: "number" } satisfies Record<
    keyof ReapOptions,
    KeyType
  >,
};

/** Moves up to `limit` due ids from `schedule` to `pending`; returns how many moved. */
export async function promote(conn: Connection, queue: string, limit: number): Promise<number> {
  assertValidQueue(queue);
  assertInteger("limit", limit, 1, MAX_LIMIT);
  return (await call(conn, "PROMOTE", queue, [String(limit)])) as number;
}

/** Expired leases (deadline before server time) go back to `pending`, or to `dead` when exhausted. */
export async function reap(conn: Connection, queue: string, opts: ReapOptions): Promise<ReapResult> {
  assertValidQueue(queue);
  const o = checkKeys(opts, REAP_OPTIONS);
  const limit = assertInteger("limit", o.limit, 1, MAX_LIMIT);
  const maxAttempts = assertInteger("maxAttempts", o.maxAttempts, 1, MAX_INTEGER);
  const keep = assertInteger("keep", o.keep, 0, MAX_INTEGER);
  const values = [String(limit), String(maxAttempts), String(keep)];
  const [requeued, dead] = (await call(conn, "REAP", queue, values)) as [Buffer[], Buffer[]];
  return { requeued: requeued.map(text), dead: dead.map(text) };
}

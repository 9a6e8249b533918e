/**
 * The `admin` family's host steps (module/src/verbs/admin.rs on the native side): `retry`,
 * `remove`, `cancel`, `pause`, `resume`, `recordLanes`, `setEvents` — a queue looked after rather than one lease.
 */
import type { Connection } from "../connector/connection.js";
import { assertValidQueue } from "../keyspace.js";
import { MAX_LANES } from "../lanes/naming.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import { assertInteger, assertJobId, MAX_INTEGER } from "./common.js";
import { call } from "./calls.js";

/** A dead job goes back to `pending` with `extraAttempts` more attempts than it has used. */
export async function retry(conn: Connection, queue: string, id: string, extraAttempts = 1): Promise<void> {
  assertValidQueue(queue);
  assertJobId(id);
  assertInteger("extraAttempts", extraAttempts, 1, MAX_INTEGER);
  await call(conn, "RETRY", queue, [id, String(extraAttempts)]);
}

/** Deletes a job that is not active; false when there is no such job. */
export async function remove(conn: Connection, queue: string, id: string): Promise<boolean> {
  assertValidQueue(queue);
  assertJobId(id);
  return (await call(conn, "REMOVE", queue, [id])) === 1;
}

/**
 * Cancels job `id` (`CANCEL`): pending, scheduled or active, it is dead at once with the error
 * `cancelled`, no retry (an active job's holder loses its lease). → the job's state when the
 * call arrived; the job was cancelled when that is `pending`, `scheduled` or `active`, else
 * nothing was written. No such job: `JobNotFoundError`.
 */
export async function cancel(conn: Connection, queue: string, id: string): Promise<string> {
  assertValidQueue(queue);
  assertJobId(id);
  return String(await call(conn, "CANCEL", queue, [id]));
}

/** Sets the queue's paused flag; false when it was already paused. */
export async function pause(conn: Connection, queue: string): Promise<boolean> {
  assertValidQueue(queue);
  return (await call(conn, "PAUSE", queue, [])) === 1;
}

/**
 * Clears the queue's paused flag and wakes one idle worker slot per job ready in `pending`; false
 * when it was not paused.
 */
export async function resume(conn: Connection, queue: string): Promise<boolean> {
  assertValidQueue(queue);
  return (await call(conn, "RESUME", queue, [])) === 1;
}

/**
 * Records `lanes` as a lane count queue `queue` is used with (in its `meta`), and returns every
 * lane count recorded, ascending: the lane sets a worker must drain.
 */
export async function recordLanes(conn: Connection, queue: string, lanes: number): Promise<number[]> {
  assertValidQueue(queue);
  assertInteger("lanes", lanes, 1, MAX_LANES);
  // (the protocol takes up to 10000; the host's bound is the lane naming rule's)
  return (await call(conn, "LANES", queue, [String(lanes)])) as number[];
}

/** A queue's event bus settings (docs/protocol.md, "The event bus"). */
export interface EventsOptions {
  /**
   * About how many entries the queue's events stream keeps (`XADD … MAXLEN ~`); `0` turns the
   * bus off (no entries written; the stream is left to the age trim). Default 10,000.
   */
  maxLen: number;
  /** About how long an entry is kept (ms; trimmed by the timers); `0`: no age bound. Default 24 h. */
  maxAgeMs: number;
}

/** The default bus of a queue whose `meta` has no settings. */
export const DEFAULT_EVENTS: Readonly<EventsOptions> = { maxLen: 10_000, maxAgeMs: 86_400_000 };

/** The keys of the event bus settings (`Queue.setEvents` takes some, `setEvents` all). */
export const EVENTS_OPTIONS: OptionTable = {
  of: "setEvents",
  keys: { maxLen: "number", maxAgeMs: "number" } satisfies Record<keyof EventsOptions, KeyType>,
  foreign: { streams: "the bus is set here: { maxLen, maxAgeMs }" },
};

/** Writes a queue's event bus settings to its `meta`; every transition reads them. */
export async function setEvents(conn: Connection, queue: string, opts: EventsOptions): Promise<void> {
  assertValidQueue(queue);
  const o = checkKeys(opts, EVENTS_OPTIONS);
  const maxLen = assertInteger("maxLen", o.maxLen, 0, MAX_INTEGER);
  const maxAgeMs = assertInteger("maxAgeMs", o.maxAgeMs, 0, MAX_INTEGER, " of milliseconds");
  await call(conn, "EVENTS", queue, [String(maxLen), String(maxAgeMs)]);
}

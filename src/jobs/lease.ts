/**
 * Host steps a worker takes on a job it holds a lease on: `extend`, `complete`, `completeNext`, `fail`, `requeue`,
 * `progress`, `log`, and the native-only `reschedule`. Each presents the lease token (the claim's `attempts`); a lost
 * lease is thrown as `LeaseLostError`, a missing row as `JobNotFoundError`.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError, NativeOnlyVerbError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import {
  assertInteger,
  assertJobId,
  assertLeaseMs,
  assertPayload,
  assertSize,
  assertToken,
  MAX_INTEGER,
  type Payload,
  text,
  toArg,
  typeOf,
} from "./common.js";
import { type ClaimOutcome, claimOutcome } from "./admission.js";
import { call } from "./calls.js";

export type FailState = "pending" | "scheduled" | "dead";

export interface FailOptions {
  /** Milliseconds before the job is due again; 0 = back in `pending` now. */
  backoffMs: number;
  /** Attempts before the job is dead (a row's own `maxAttempts` wins). */
  maxAttempts: number;
  /** How many ids `dead` keeps; 0 deletes the row of a job that dies. */
  keep: number;
}

const FAIL_OPTIONS: OptionTable = {
  of: "fail",
  keys: { backoffMs: "number", maxAttempts: "number", keep: "number" } satisfies Record<
    keyof FailOptions,
    KeyType
  >,
};

/** Validates queue, id and token: the head of every lease step. */
function leased(queue: string, id: string, token: number): void {
  assertValidQueue(queue);
  assertJobId(id);
  assertToken(token);
}

/** Moves the lease deadline to server time + `leaseMs`; returns the new deadline (ms). */
export async function extend(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  leaseMs: number,
): Promise<number> {
  leased(queue, id, token);
  assertLeaseMs(leaseMs);
  return (await call(conn, "EXTEND", queue, [id, String(token), String(leaseMs)])) as number;
}

/** The host's checks of a completion (`COMPLETE`, and the completion part of `COMPLETENEXT`). */
function checkCompletion(queue: string, id: string, token: number, result: Payload, keep: number): void {
  leased(queue, id, token);
  assertPayload(result, "result", "result");
  assertInteger("keep", keep, 0, MAX_INTEGER);
}

/** Completes a job: its row keeps `result` in `done` (at most `keep` ids), or is deleted (keep 0). */
export async function complete(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  result: Payload,
  keep: number,
): Promise<void> {
  checkCompletion(queue, id, token, result, keep);
  await call(conn, "COMPLETE", queue, [id, String(token), toArg(result), String(keep)]);
}

/**
 * Completes a job and, in the same transition, leases the queue's next job for `leaseMs` (one
 * round trip: `COMPLETENEXT`). The queue's pause flag is read inside the transition, not by the
 * host (declared difference D10). Answers the claim's outcome: the next job, a limited claim, or
 * null (nothing to lease, the queue paused, or the claim refused — a `claim` then meets the
 * refusal). A refusal of the completion is thrown as `complete`'s, and leases nothing.
 */
export async function completeNext(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  result: Payload,
  keep: number,
  leaseMs: number,
): Promise<ClaimOutcome> {
  checkCompletion(queue, id, token, result, keep);
  assertLeaseMs(leaseMs);
  const reply = await call(conn, "COMPLETENEXT", queue, [
    id,
    String(token),
    toArg(result),
    String(keep),
    leaseMs,
  ]);
  return nextOutcome((reply as unknown[]).slice(1));
}

/** What follows a settled job in a `…NEXT` reply: nothing, a limited claim's wait, or the job. */
function nextOutcome(rest: unknown[]): ClaimOutcome {
  if (rest.length === 0) return null;
  if (rest.length === 1) return claimOutcome(rest[0]);
  return claimOutcome(rest);
}

/**
 * Fails an attempt. The job is dead once its attempts reach `maxAttempts` (the row's own value
 * wins); otherwise it is back in `pending` (backoff 0) or waits `backoffMs` in `schedule`.
 */
export async function fail(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  error: string,
  opts: FailOptions,
): Promise<FailState> {
  leased(queue, id, token);
  if (typeof error !== "string") {
    throw new InvalidArgumentError("error", `must be a string, got ${typeOf(error)}`);
  }
  assertSize("error", error, "error");
  const o = checkKeys(opts, FAIL_OPTIONS);
  const backoff = assertInteger("backoffMs", o.backoffMs, 0, MAX_INTEGER, " of milliseconds");
  const maxAttempts = assertInteger("maxAttempts", o.maxAttempts, 1, MAX_INTEGER);
  const keep = assertInteger("keep", o.keep, 0, MAX_INTEGER);
  const values = [id, String(token), error, String(backoff), String(maxAttempts), String(keep)];
  return text(await call(conn, "FAIL", queue, values)) as FailState;
}

/**
 * Native only (wire 6): hands an active job back to `schedule`, due at server time + `delayMs`
 * (a snooze; the attempt counts). Returns the due time (ms).
 */
export async function reschedule(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  delayMs: number,
): Promise<number> {
  leased(queue, id, token);
  assertInteger("delayMs", delayMs, 0, MAX_INTEGER, " of milliseconds");
  if (!conn.engine.runs("RESCHEDULE")) {
    throw new NativeOnlyVerbError(
      "RESCHEDULE",
      "On wire 4 use fail() with backoffMs = the delay (it records an error and may bury the job " +
        "at its attempt limit), or connect with wire 6.",
    );
  }
  return (await call(conn, "RESCHEDULE", queue, [id, String(token), String(delayMs)])) as number;
}

/**
 * Returns an active job to `pending` now without consuming its attempt (a closing worker's step),
 * on both wires. `attempts` never decreases (it is the lease token), so the job's limit rises by
 * one instead: its row's `max_attempts` becomes M + 1, M being the row's own `maxAttempts` when
 * set, else `maxAttempts` (the worker's limit).
 */
export async function requeue(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  maxAttempts: number,
): Promise<void> {
  leased(queue, id, token);
  assertInteger("maxAttempts", maxAttempts, 1, MAX_INTEGER);
  await call(conn, "REQUEUE", queue, [id, String(token), String(maxAttempts)]);
}

/**
 * Records an active job's progress: its row keeps `value` (bytes; the latest replaces the one
 * before), and the queue's event bus announces it (`progress`, with the value as `data` when it
 * is at most 200 bytes). A stale worker's call is refused with `LeaseLostError`.
 */
export async function progress(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  value: Payload,
): Promise<void> {
  leased(queue, id, token);
  assertPayload(value, "value", "progress");
  await call(conn, "PROGRESS", queue, [id, String(token), toArg(value)]);
}

/**
 * Appends a line to an active job's log, kept on its row (the last 100 lines); returns the
 * line's number (from 1 over the job's life). A stale worker's call is refused with
 * `LeaseLostError`.
 */
export async function log(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  line: string,
): Promise<number> {
  leased(queue, id, token);
  if (typeof line !== "string") {
    throw new InvalidArgumentError("line", `must be a string, got ${typeOf(line)}`);
  }
  assertSize("line", line, "line");
  return (await call(conn, "LOG", queue, [id, String(token), line])) as number;
}

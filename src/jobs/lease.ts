/**
 * The `lease` family's host steps (module/src/verbs/lease.rs on the native side), taken on a job the worker holds a
 * lease on: `extend`, `complete`, `completeNext`, `fail`, `failNext`, `requeue` and `reschedule`. Each presents the lease token (the claim's `attempts`); a lost
 * lease is thrown as `LeaseLostError`, a missing row as `JobNotFoundError`.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError, ServerError, typedServerError } from "../errors.js";
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
import { type ClaimedJob, type ClaimLimited, type ClaimOutcome, claimOutcome } from "./jobs.js";
import { call } from "./calls.js";

export type FailState = "pending" | "scheduled" | "dead";

export interface FailOptions {
  /** Milliseconds before the job is due again; 0 = back in `pending` now. */
  backoffMs: number;
  /**
   * Attempts before the job is dead (a row's own `maxAttempts` wins); `0`: dead now, whatever
   * the row's own (a handler's `UnrecoverableError`).
   */
  maxAttempts: number;
  /** How many ids `dead` keeps; 0 deletes the row of a job that dies. */
  keep: number;
  /**
   * The failure's stack trace, kept on the row beside its error (`stack`; at most 8 KiB, the
   * protocol's `stack` bound: a longer one is refused). Absent or empty: the row keeps none (a
   * stack an earlier failure left is removed).
   */
  stack?: string;
}

const FAIL_OPTIONS: OptionTable = {
  of: "fail",
  keys: { backoffMs: "number", maxAttempts: "number", keep: "number", stack: "string" } satisfies Record<
    keyof FailOptions,
    KeyType
  >,
};

/** Validates queue, id and token: the head of every lease step. */
export function leased(queue: string, id: string, token: number): void {
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
 * The host's checks of a failure (`FAIL`, and the failure part of `FAILNEXT`): its values in
 * order, and its stack (the form's last value).
 */
function checkFailure(
  queue: string,
  id: string,
  token: number,
  error: string,
  opts: FailOptions,
): { values: string[]; stack: string } {
  leased(queue, id, token);
  if (typeof error !== "string") {
    throw new InvalidArgumentError("error", `must be a string, got ${typeOf(error)}`);
  }
  assertSize("error", error, "error");
  const o = checkKeys(opts, FAIL_OPTIONS);
  const backoff = assertInteger("backoffMs", o.backoffMs, 0, MAX_INTEGER, " of milliseconds");
  const maxAttempts = assertInteger("maxAttempts", o.maxAttempts, 0, MAX_INTEGER);
  const keep = assertInteger("keep", o.keep, 0, MAX_INTEGER);
  const stack = o.stack ?? "";
  if (typeof stack !== "string") {
    throw new InvalidArgumentError("stack", `must be a string, got ${typeOf(stack)}`);
  }
  assertSize("stack", stack, "stack");
  return { values: [id, String(token), error, String(backoff), String(maxAttempts), String(keep)], stack };
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
  const { values, stack } = checkFailure(queue, id, token, error, opts);
  return text(await call(conn, "FAIL", queue, [...values, stack])) as FailState;
}

/** What `failNext` answers: the failed job's new state, and the claim's outcome after it. */
export interface FailNextOutcome {
  state: FailState;
  next: ClaimOutcome;
}

/**
 * Fails an attempt (as `fail`) and, in the same transition, leases the queue's next job for
 * `leaseMs` (one round trip: `FAILNEXT`). The queue's pause flag is read inside the transition,
 * not by the host (declared difference D11). The job the failure sent back to `pending` may be
 * that next job (a new lease, its attempts one more), exactly when a `claim` after the `fail`
 * would lease it. Answers the failed job's state and the claim's outcome: the next job, a limited
 * claim, or null (nothing to lease, the queue paused, or the claim refused — a `claim` then meets
 * the refusal). A refusal of the failure is thrown as `fail`'s, and leases nothing.
 */
export async function failNext(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  error: string,
  opts: FailOptions,
  leaseMs: number,
): Promise<FailNextOutcome> {
  const { values, stack } = checkFailure(queue, id, token, error, opts);
  assertLeaseMs(leaseMs);
  const reply = (await call(conn, "FAILNEXT", queue, [...values, leaseMs, stack])) as unknown[];
  return { state: text(reply[0]) as FailState, next: nextOutcome(reply.slice(1)) };
}

/**
 * Hands an active job back to `schedule`, due at server time + `delayMs` (a snooze, both wires:
 * `EMQ.RESCHEDULE` / reschedule.lua). The lease is released, no error is written, and `attempts`
 * is unchanged: the snoozed attempt counts toward the job's max attempts. Returns the due time (ms).
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

/* ------------------------------------------------------------------ COMPLETEN */

/** The most jobs one `COMPLETEN` settles (the protocol's `repeat.max`). */
export const MAX_COMPLETIONS = 1000;

/** One job's completion in a batch: its id, the lease token its claim returned, its result. */
export interface Completion {
  id: string;
  token: number;
  result: Payload;
}

/** What `completeMany` answers: per completion in order, null (completed) or its refusal; then the jobs leased. */
export interface CompletedMany {
  /** One per completion, in order: null when it completed, else its typed refusal (`LeaseLostError`, …). */
  refused: (Error | null)[];
  /** The next jobs leased, in order, at most `next`. */
  jobs: ClaimedJob[];
  /** The limited claim that stopped the claims, if one did. */
  limited: ClaimLimited | null;
}

/**
 * Completes up to 1000 jobs of `queue` in one transition (`COMPLETEN`), exactly `complete` for
 * each in order, then leases up to `next` jobs (at most one per completion) for `leaseMs` each,
 * exactly `claim` that many times in a row. A job's refusal (a stale lease token, a job no longer
 * active) is reported in `refused` at its place, typed as `complete` throws it, and spoils none
 * of the others. The queue's pause flag is read inside the transition (declared difference D13):
 * paused, nothing is leased.
 */
export async function completeMany(
  conn: Connection,
  queue: string,
  completions: readonly Completion[],
  keep: number,
  next: number,
  leaseMs: number,
): Promise<CompletedMany> {
  if (!Array.isArray(completions) || completions.length < 1 || completions.length > MAX_COMPLETIONS) {
    throw new InvalidArgumentError("completions", `must be an array of 1 to ${MAX_COMPLETIONS} completions`);
  }
  assertLeaseMs(leaseMs);
  const values: (string | Buffer)[] = [
    String(assertInteger("keep", keep, 0, MAX_INTEGER)),
    String(leaseMs),
    String(assertInteger("next", next, 0, MAX_INTEGER)),
  ];
  for (const c of completions) {
    leased(queue, c.id, c.token);
    assertPayload(c.result, "result", "result");
    values.push(c.id, String(c.token), toArg(c.result));
  }
  const [outcomes, ...rest] = (await call(conn, "COMPLETEN", queue, values)) as [unknown[], ...unknown[]];
  const answer: CompletedMany = { refused: [], jobs: [], limited: null };
  for (const o of outcomes) {
    answer.refused.push(o === 1 ? null : (typedServerError(new ServerError(String(o))) as Error));
  }
  for (const entry of rest) {
    const got = claimOutcome(entry);
    if (got && "limited" in got) answer.limited = got;
    else if (got) answer.jobs.push(got);
  }
  return answer;
}

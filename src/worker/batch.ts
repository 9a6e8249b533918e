/**
 * Batch processing (the `Worker` option `batch`): the handler takes up to `size` jobs at once, each
 * with its own lease, token, attempts and result. What a batch handler returns, and how it settles
 * each job: nothing (every job completes, no result), or one entry per job, in order — its result,
 * or `failed(error)` for a job that failed (that job alone fails its attempt; the others complete).
 * A handler that throws fails every job of the batch with that error. Pure.
 */
import { InvalidArgumentError, InvalidBatchResultError } from "../errors.js";
import { MAX_LIMIT } from "../jobs/common.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import type { Job } from "./job.js";

export interface BatchOption {
  /** The most jobs one handler call takes, 1 to 10,000. */
  size: number;
  /**
   * How long a batch waits for more jobs once it has one, when fewer than `size` are ready (ms);
   * then it runs with what it has. 0 (the default) runs with whatever is ready at once. Under
   * `leaseMs`: the jobs gathered hold their leases meanwhile.
   */
  maxWaitMs?: number;
}

export interface ResolvedBatch {
  size: number;
  maxWaitMs: number;
}

/** A batch handler: the batch's jobs, in the order leased; returns nothing or one entry per job. */
export type BatchHandler = (jobs: Job[]) => unknown;

const BATCH_OPTIONS: OptionTable = {
  of: "batch",
  keys: { size: "number", maxWaitMs: "number" } satisfies Record<keyof BatchOption, KeyType>,
  foreign: {
    timeout: "maxWaitMs",
    minSize: "a batch runs with what is ready after maxWaitMs: there is no minimum",
  },
};

/** The `batch` option checked (`null` when absent): sizes and waits are integers in their bounds. */
export function checkBatch(option: unknown, leaseMs: number): ResolvedBatch | null {
  if (option === undefined) return null;
  const o = checkKeys(option, BATCH_OPTIONS, "batch", "batch.") as Partial<BatchOption>;
  const size = o.size;
  if (typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > MAX_LIMIT) {
    throw new InvalidArgumentError(
      "batch.size",
      `must be an integer from 1 to ${MAX_LIMIT}, got ${String(size)}`,
    );
  }
  const maxWaitMs = o.maxWaitMs ?? 0;
  if (
    typeof maxWaitMs !== "number" ||
    !Number.isInteger(maxWaitMs) ||
    maxWaitMs < 0 ||
    maxWaitMs >= leaseMs
  ) {
    throw new InvalidArgumentError(
      "batch.maxWaitMs",
      `must be an integer of milliseconds from 0 to under leaseMs (${leaseMs}): the jobs gathered hold their leases while a batch waits, got ${String(o.maxWaitMs)}`,
    );
  }
  return { size, maxWaitMs };
}

/** A job of a batch that failed: the handler's entry for it (`failed(error)`). */
export class JobFailed {
  constructor(readonly error: unknown) {}
}

/** The entry a batch handler returns for a job that failed: that job alone fails its attempt. */
export function failed(error: unknown): JobFailed {
  return new JobFailed(error);
}

export type Outcome = { ok: true; result: unknown } | { ok: false; error: unknown };

/** Each job's outcome from what the batch handler returned (`returned`) for `count` jobs. */
export function batchOutcomes(returned: unknown, count: number): Outcome[] {
  if (returned === undefined) return Array.from({ length: count }, () => ({ ok: true, result: undefined }));
  if (!Array.isArray(returned)) {
    const error = new InvalidBatchResultError(`it returned ${kind(returned)}, not an array`);
    return Array.from({ length: count }, () => ({ ok: false, error }));
  }
  if (returned.length !== count) {
    const error = new InvalidBatchResultError(`it returned ${returned.length} entries for ${count} jobs`);
    return Array.from({ length: count }, () => ({ ok: false, error }));
  }
  return returned.map((entry) =>
    entry instanceof JobFailed ? { ok: false, error: entry.error } : { ok: true, result: entry },
  );
}

/** Every job of a batch whose handler threw (or timed out) fails with `error`. */
export function batchFailed(error: unknown, count: number): Outcome[] {
  return Array.from({ length: count }, () => ({ ok: false, error }));
}

function kind(value: unknown): string {
  if (value === null) return "null";
  return `a ${typeof value}`;
}

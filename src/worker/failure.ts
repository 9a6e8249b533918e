/**
 * How a worker fails an attempt: the retry delay from the job's own backoff (its row's `backoff`,
 * read on the failure only) or else the worker's, and `dead` at once for an `UnrecoverableError`.
 */
import type { BackoffOption } from "../backoff.js";
import type { Connection } from "../connector/connection.js";
import { UnrecoverableError } from "../errors.js";
import type { FailOptions } from "../jobs.js";
import { parseJobBackoff } from "../jobs/job-backoff.js";
import { jobKey } from "../keyspace.js";
import type { JobView } from "./job.js";
import { errorText, retryDelay, stackText } from "./outcome.js";

/** A handler's error that fails its job without a retry: `UnrecoverableError`, by class or name. */
function isUnrecoverable(error: unknown): boolean {
  return (
    error instanceof UnrecoverableError || (error instanceof Error && error.name === "UnrecoverableError")
  );
}

interface FailWith {
  backoff: BackoffOption;
  attempts: number;
  keepDead: number;
  report: (problem: unknown) => void;
}

/** The job's own backoff, when its row keeps one (one `HGET`, on a failure only). */
async function ownBackoff(conn: Connection, job: JobView): Promise<BackoffOption | null> {
  const text = await conn.send("HGET", [jobKey(job.lane, job.id), "backoff"]);
  return text == null ? null : parseJobBackoff(String(text));
}

/**
 * The failure of the attempt (`FAIL`, or `FAILNEXT`'s failure): its error text and stack, and the delay
 * before the retry — the job's own backoff, else the worker's — or max attempts 0 (dead now) for
 * an `UnrecoverableError`.
 */
export async function failureOf(
  conn: Connection,
  job: JobView,
  error: unknown,
  w: FailWith,
): Promise<{ text: string; opts: FailOptions }> {
  const unrecoverable = isUnrecoverable(error);
  let delayMs = 0;
  if (!unrecoverable) {
    const retry = retryDelay((await ownBackoff(conn, job)) ?? w.backoff, job.attempts, error);
    if (retry.problem) w.report(retry.problem);
    delayMs = retry.delayMs;
  }
  const opts = {
    backoffMs: delayMs,
    maxAttempts: unrecoverable ? 0 : w.attempts,
    keep: w.keepDead,
    stack: stackText(error),
  };
  return { text: errorText(error), opts };
}

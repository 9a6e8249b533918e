/** A job's time limit (`timeoutMs`): the handler's run raced against it. */
import { TimeoutError } from "../errors.js";
import type { JobView } from "./job.js";

/**
 * `run` as it settles, or — when the job has a time limit and the handler is still running at
 * it — a rejection with `TimeoutError`, after the job's `signal` is aborted with that error.
 */
export function withinTimeout<T>(run: Promise<T>, job: JobView, timeoutMs: number): Promise<T> {
  if (timeoutMs <= 0) return run;
  let timer: NodeJS.Timeout | undefined;
  let timedOut: TimeoutError | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = new TimeoutError(job.id, timeoutMs);
      reject(timedOut);
      job.abort(timedOut);
    }, timeoutMs);
  });
  run.catch(() => {}); // a handler that fails after its timeout is not an unhandled rejection
  // A handler that rejects as its signal aborts (before the race sees the limit) failed by it.
  return Promise.race([run, limit])
    .catch((error: unknown) => {
      throw timedOut ?? error;
    })
    .finally(() => clearTimeout(timer));
}

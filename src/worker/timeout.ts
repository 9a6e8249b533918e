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
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new TimeoutError(job.id, timeoutMs);
      job.abort(error);
      reject(error);
    }, timeoutMs);
  });
  run.catch(() => {}); // a handler that fails after its timeout is not an unhandled rejection
  return Promise.race([run, limit]).finally(() => clearTimeout(timer));
}

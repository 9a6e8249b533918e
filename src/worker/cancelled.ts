/**
 * A lease found lost may be a cancel (`queue.cancel(id)`, docs/jobs.md "Cancelling a job"): the
 * cancel ends the lease at once, so the worker learns it as a refused renewal or settlement and
 * tells the two apart by the row — its `cancelled` field names the attempt a cancel ended. One
 * read, only when a lease is lost.
 */
import { JobCancelledError, type LeaseLostError } from "../errors.js";
import { jobKey } from "../keyspace.js";
import type { WorkerContext } from "./context.js";
import type { Running } from "./job.js";

/** `JobCancelledError` when a cancel ended this attempt, else `err` as it is. */
async function lossOf(ctx: WorkerContext, entry: Running, err: LeaseLostError): Promise<unknown> {
  const { job } = entry;
  if (err.reason !== "not active") return err;
  const ended = await ctx.conn.send("HGET", [jobKey(job.lane, job.id), "cancelled"]).then(
    (v) => (v == null ? "" : String(v)),
    () => "",
  );
  return ended === String(job.attempts) ? new JobCancelledError(job.queue, job.id) : err;
}

/**
 * Reports a lost lease once (the caller has marked the entry): the job's signal aborts with the
 * loss — `JobCancelledError` for a cancel, reported as `cancelled`, else the `LeaseLostError`,
 * reported as `leaseLost`.
 */
export async function reportLoss(ctx: WorkerContext, entry: Running, err: LeaseLostError): Promise<void> {
  const loss = await lossOf(ctx, entry, err);
  entry.job.abort(loss);
  if (loss instanceof JobCancelledError) ctx.emit("cancelled", entry.job, loss);
  else ctx.emit("leaseLost", entry.job, loss);
}

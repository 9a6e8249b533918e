/**
 * Jobs a worker gives back to `pending` (`REQUEUE`, both wires: the attempt a job held is given
 * back, its limit rises by one): the unfinished ones at close(), a claim that came too late for
 * its slot, a job a completion leased that no slot will run.
 */
import type { ClaimedJob } from "../jobs.js";
import { LeaseLostError } from "../errors.js";
import { requeue } from "../jobs.js";
import type { WorkerContext } from "./context.js";
import type { Running } from "./job.js";

/** `REQUEUE`: pending now, with the attempt it held given back (its limit rises by one). */
export async function handBack(ctx: WorkerContext, entry: Running): Promise<void> {
  const { id, attempts } = entry.job;
  try {
    await requeue(ctx.conn, entry.lane, id, attempts, ctx.opts.attempts);
  } catch (err) {
    if (!(err instanceof LeaseLostError) && ctx.fatalError() === undefined) ctx.report(err);
  }
}

/**
 * A job no slot runs — a claim answered after its slot abandoned it, or too late to start — goes
 * back to `pending` (`REQUEUE` under its token: refused, and ignored, when another worker holds
 * it now; a job whose hand-back is lost goes back when its lease expires).
 */
export function handBackLate(ctx: WorkerContext, lane: string, claimed: ClaimedJob): void {
  requeue(ctx.conn, lane, claimed.id, claimed.attempts, ctx.opts.attempts).catch(() => {}); // else the reaper
}

/** A job a completion leased that no slot will run (closing, or abandoned): back to `pending`. */
export function handBackLeased(ctx: WorkerContext, lane: string, leased: ClaimedJob): void {
  const back = requeue(ctx.conn, lane, leased.id, leased.attempts, ctx.opts.attempts).then(
    () => "handed-back" as const,
    () => "handed-back" as const, // else the reaper
  );
  ctx.settling.add(back);
  void back.finally(() => ctx.settling.delete(back));
}

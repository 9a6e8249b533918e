/**
 * The worker's lease heartbeat: one timer renews every running lease a third of the way through
 * it (a job claimed less than a sixth of a lease ago waits for the next tick). A lease found lost
 * aborts its job's signal (with `JobCancelledError` when a cancel ended it: `cancelled.ts`).
 */
import { LeaseLostError } from "../errors.js";
import { extend } from "../jobs.js";
import { reportLoss } from "./cancelled.js";
import type { WorkerContext } from "./context.js";

/**
 * Starts the heartbeat (`tick` runs on each beat too: the worker's announcement keeps alive);
 * `clearInterval` on the timer stops it.
 */
export function startHeartbeat(ctx: WorkerContext, tick: () => void = () => {}): NodeJS.Timeout {
  return setInterval(
    () => {
      renewLeases(ctx);
      tick();
    },
    Math.max(Math.floor(ctx.opts.leaseMs / 3), 1),
  );
}

function renewLeases(ctx: WorkerContext): void {
  const fresh = Date.now() - ctx.opts.leaseMs / 6;
  for (const entry of ctx.running) {
    if (entry.handedBack || entry.leaseLost || entry.settled || entry.job.moved || entry.leasedAt > fresh)
      continue;
    const { job } = entry;
    const asked = Date.now();
    extend(ctx.conn, entry.lane, job.id, job.attempts, ctx.opts.leaseMs).then(
      () => {
        entry.leasedAt = asked;
      },
      (err) => {
        if (!(err instanceof LeaseLostError)) return void ctx.fault(err);
        // Settled: its complete / fail meets the same refusal and reports it once.
        if (entry.leaseLost || entry.handedBack || entry.settled || job.moved) return;
        entry.leaseLost = true;
        void reportLoss(ctx, entry, err);
      },
    );
  }
}

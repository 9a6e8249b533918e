/**
 * How a worker settles a job its handler ran: the complete, or the fail with the backoff for the
 * attempt — when the slot's next pick is the same lane, `COMPLETENEXT` or `FAILNEXT`, which lease
 * that lane's next job in the same transition — sent again while the error passes with time.
 */
import { LeaseLostError } from "../errors.js";
import { type ClaimOutcome, type FailOptions, fail, failNext } from "../jobs.js";
import type { Settled } from "../observe/consumer-spans.js";
import type { Carry } from "./carry.js";
import { abandonable } from "./claims.js";
import { completeLeasingTogether, completeTogether } from "./coalesce.js";
import { retryAfterError } from "./faults.js";
import { handBackLeased } from "./hand-back.js";
import type { JobView, Running } from "./job.js";
import { encodeResult } from "./outcome.js";
import { failureOf } from "./failure.js";
import { reportLoss } from "./cancelled.js";
import { sleep, type WorkerContext } from "./context.js";

/** What a job's handler came to: its result, or the error it threw. */
export type Outcome = { ok: true; result: unknown } | { ok: false; error: unknown };

/**
 * Sends the job's complete or fail. A send that fails in a way that passes with time is sent
 * again (leases and tokens make that safe) until the lease would have run out; a repeat that
 * finds the job no longer active means the first send landed. Resolves with how it ended.
 */
export async function settle(
  ctx: WorkerContext,
  entry: Running,
  outcome: Outcome,
  onNext?: (next: Carry) => void,
): Promise<Settled> {
  const { job } = entry;
  let resent = false;
  try {
    for (let failures = 1; ; failures++) {
      if (entry.handedBack || job.moved) return "handed-back";
      if (entry.leaseLost) return "lease-lost";
      try {
        // A send again is the plain completion: the first may have leased a job already.
        return await settleOnce(ctx, job, outcome, resent ? undefined : onNext);
      } catch (err) {
        if (err instanceof LeaseLostError && resent && err.reason === "not active") {
          ctx.emit(outcome.ok ? "completed" : "failed", job, outcome.ok ? outcome.result : outcome.error);
          return "landed";
        }
        if (err instanceof LeaseLostError) {
          await reportLoss(ctx, entry, err);
          return "lease-lost";
        }
        if (ctx.fault(err)) return "unsettled";
        if (Date.now() >= entry.leasedAt + ctx.opts.leaseMs) return "unsettled"; // the reaper takes it back
        resent = true;
        await sleep(retryAfterError(failures));
      }
    }
  } finally {
    ctx.running.delete(entry);
  }
}

async function settleOnce(
  ctx: WorkerContext,
  job: JobView,
  outcome: Outcome,
  onNext?: (next: Carry) => void,
): Promise<Settled> {
  if (outcome.ok) {
    let result: string | Uint8Array;
    try {
      result = encodeResult(outcome.result);
    } catch (problem) {
      ctx.report(problem);
      return failJob(ctx, job, problem, onNext);
    }
    if (onNext) await completeLeasing(ctx, job, result, onNext);
    else await completeTogether(ctx.conn, job.lane, job.id, job.attempts, result, ctx.opts.keepCompleted);
    ctx.lanes.settled(job.lane);
    ctx.emit("completed", job, outcome.result);
    return "completed";
  }
  const failed = await failJob(ctx, job, outcome.error, onNext);
  if (failed === "dead") ctx.lanes.settled(job.lane);
  return failed;
}

/**
 * `COMPLETENEXT`: the completion, and the lane's next job leased in the same transition — with
 * the others of the lane ready in the same run, one `COMPLETEN` for them all (coalesce.ts).
 */
async function completeLeasing(
  ctx: WorkerContext,
  job: JobView,
  result: string | Uint8Array,
  onNext: (next: Carry) => void,
) {
  const claimedAt = Date.now();
  const { lane, id, attempts } = job;
  const { keepCompleted, leaseMs } = ctx.opts;
  const sent = completeLeasingTogether(
    ctx.conn,
    lane,
    id,
    attempts,
    result,
    keepCompleted,
    leaseMs,
    (spare) => handBackLeased(ctx, lane, spare),
  );
  await leaseAfter(ctx, lane, sent, onNext, claimedAt);
}

/** `FAILNEXT`: the failure, and the lane's next job leased in the same transition. */
async function failLeasing(
  ctx: WorkerContext,
  job: JobView,
  error: string,
  opts: FailOptions,
  onNext: (next: Carry) => void,
) {
  const claimedAt = Date.now();
  const sent = failNext(ctx.conn, job.lane, job.id, job.attempts, error, opts, ctx.opts.leaseMs);
  await leaseAfter(
    ctx,
    job.lane,
    sent.then((r) => r.next),
    onNext,
    claimedAt,
  );
  return (await sent).state;
}

/**
 * What a settlement that leases (`…NEXT`) brought, bounded like a claim (an unanswered one is
 * abandoned; a job it brings late is handed back): the job, a limited claim's wait, or nothing
 * (`undefined`: the lane had no job to lease), to the slot. `onNext` is called only when the reply
 * came: a call that failed (its connection cut, abandoned) says nothing about the lane.
 */
async function leaseAfter(
  ctx: WorkerContext,
  lane: string,
  sent: Promise<ClaimOutcome>,
  onNext: (next: Carry) => void,
  claimedAt: number,
) {
  const bounded = abandonable(sent, lane, (late) => handBackLeased(ctx, lane, late));
  ctx.claims.add(bounded);
  let next: ClaimOutcome;
  try {
    next = await bounded;
  } finally {
    ctx.claims.delete(bounded);
  }
  if (next && "id" in next) {
    if (ctx.closing()) handBackLeased(ctx, lane, next);
    else onNext({ job: next, lane, claimedAt });
  } else onNext(next ? { waitMs: next.waitMs } : undefined);
}

/**
 * Fails the attempt with its backoff (the job's own, else the worker's; one that gives no usable
 * delay fails it with none), or straight to `dead` for an `UnrecoverableError`. With `onNext`,
 * the lane's next job is leased in the same transition (`FAILNEXT`).
 */
async function failJob(
  ctx: WorkerContext,
  job: JobView,
  error: unknown,
  onNext?: (next: Carry) => void,
): Promise<"pending" | "scheduled" | "dead"> {
  const { text, opts } = await failureOf(ctx.conn, job, error, {
    backoff: ctx.opts.backoff,
    attempts: ctx.opts.attempts,
    keepDead: ctx.opts.keepDead,
    report: (problem) => ctx.report(problem),
  });
  const state = onNext
    ? await failLeasing(ctx, job, text, opts, onNext)
    : await fail(ctx.conn, job.lane, job.id, job.attempts, text, opts);
  ctx.emit("failed", job, error);
  if (state === "dead") ctx.emit("dead", job, error);
  else ctx.emit("retrying", job, error, state);
  return state;
}

/**
 * A batch slot (the `Worker` option `batch`): it leases up to `size` jobs of a lane in one call
 * (`CLAIMN`), waits up to `maxWaitMs` for more while fewer are ready, then hands them to the
 * batch handler at once. Each job keeps its own lease (renewed by the heartbeat while the batch
 * runs), token, attempts and settlement: the handler's entry for it completes it, or fails it
 * alone (`failed(error)`); a handler that throws, or a batch past the shortest `timeoutMs` of its
 * jobs, fails every job of the batch.
 */
import { TimeoutError } from "../errors.js";
import type { ClaimBatch, ClaimedJob } from "../jobs.js";
import { type BatchHandler, batchFailed, batchOutcomes, type Outcome, type ResolvedBatch } from "./batch.js";
import { heldBack, type WorkerContext } from "./context.js";
import { retryAfterError } from "./faults.js";
import { handBackLate, handBackLeased } from "./hand-back.js";
import { JobView, type Running } from "./job.js";
import type { LeaseCheck } from "./lease-check.js";
import { settle } from "./settle.js";
import { withinTimeout } from "./timeout.js";

interface BatchSlotDeps {
  ctx: WorkerContext;
  batch: ResolvedBatch;
  handler: BatchHandler;
  leaseCheck: LeaseCheck;
  /** Leases up to `count` jobs of `lane` in one call, bounded like any claim. */
  claim(lane: string, count: number): Promise<ClaimBatch>;
}

/** One batch slot's loop, until the worker closes. */
export async function batchSlot(d: BatchSlotDeps): Promise<void> {
  const { ctx } = d;
  let failures = 0;
  while (!ctx.closing()) {
    const pick = ctx.lanes.set.next();
    if (!pick) {
      await ctx.gate.wait();
      continue;
    }
    let got: ClaimBatch;
    try {
      got = await d.claim(pick.lane, d.batch.size);
      failures = 0;
    } catch (err) {
      if (ctx.fault(err)) return;
      if (!ctx.closing()) await ctx.gate.wait(retryAfterError(++failures));
      continue;
    }
    if (got.jobs.length === 0) {
      if (got.limited) await heldBack(ctx, got.limited.waitMs);
      else ctx.lanes.set.empty(pick.lane, pick.epoch);
      continue;
    }
    const jobs = got.limited ? got.jobs : await gather(d, pick.lane, got.jobs);
    if (ctx.closing()) {
      for (const job of jobs) handBackLeased(ctx, pick.lane, job);
      return;
    }
    if (jobs.length === d.batch.size) ctx.gate.releaseOne(); // the queue may hold more
    await runBatch(d, pick.lane, jobs);
  }
}

/**
 * More jobs for a batch that has fewer than `size`: a claim after each wake, until the batch is
 * full, the lane has nothing more now that `maxWaitMs` has passed, or the worker closes.
 */
async function gather(d: BatchSlotDeps, lane: string, jobs: ClaimedJob[]): Promise<ClaimedJob[]> {
  const { ctx, batch } = d;
  const until = Date.now() + batch.maxWaitMs;
  while (jobs.length < batch.size && !ctx.closing()) {
    const left = until - Date.now();
    if (left <= 0) break;
    await ctx.gate.wait(left);
    if (ctx.closing()) break;
    let more: ClaimBatch;
    try {
      more = await d.claim(lane, batch.size - jobs.length);
    } catch (err) {
      ctx.fault(err);
      break;
    }
    jobs.push(...more.jobs);
    if (more.limited) break;
  }
  return jobs;
}

/** Runs the handler on the jobs whose leases are still this worker's, then settles each one. */
async function runBatch(d: BatchSlotDeps, lane: string, claimed: ClaimedJob[]): Promise<void> {
  const { ctx } = d;
  const entries: Running[] = claimed.map((c) => ({
    job: new JobView(ctx.name, lane, c, ctx.conn),
    lane,
    leasedAt: Date.now(),
    handedBack: false,
    leaseLost: false,
    settled: false,
  }));
  for (const entry of entries) ctx.running.add(entry);
  const verdicts = await Promise.all(claimed.map((c) => d.leaseCheck.before(lane, c)));
  const run: Running[] = [];
  const timeouts: number[] = [];
  entries.forEach((entry, i) => {
    const verdict = verdicts[i]!;
    if (verdict.start && !entry.handedBack) {
      entry.leasedAt = verdict.leasedAt; // the heartbeat renews it on time
      run.push(entry);
      timeouts.push(claimed[i]!.timeoutMs);
      return;
    }
    // Handed back by close() meanwhile, or its lease is over or cannot be vouched for: not run.
    ctx.running.delete(entry);
    if (entry.handedBack || verdict.start) return;
    if (verdict.handBack) handBackLate(ctx, lane, claimed[i]!);
    if (verdict.error) ctx.emit("leaseLost", entry.job, verdict.error);
  });
  if (run.length === 0) return;
  for (const entry of run) ctx.emit("active", entry.job);
  const outcomes = await outcomesOf(d.handler, run, timeouts);
  // Each job settles on its own (its complete or fail), sent without waiting: the next claim
  // shares their round trip.
  run.forEach((entry, i) => {
    entry.settled = true;
    const settled = settle(ctx, entry, outcomes[i]!);
    ctx.settling.add(settled);
    void settled.finally(() => ctx.settling.delete(settled));
  });
}

/** The handler's outcome per job: its entries, or its error for every job. */
async function outcomesOf(handler: BatchHandler, run: Running[], timeouts: number[]): Promise<Outcome[]> {
  const views = run.map((e) => e.job);
  try {
    const returned = await withinShortest(() => handler(views), views, timeouts);
    return batchOutcomes(returned, run.length);
  } catch (error) {
    return batchFailed(error, run.length);
  }
}

/**
 * The handler's run raced against the shortest time limit of its jobs (`timeoutMs`, none when no
 * job has one); at it, every job's signal is aborted with the `TimeoutError`.
 */
async function withinShortest(run: () => unknown, views: JobView[], timeouts: number[]): Promise<unknown> {
  let at = -1;
  timeouts.forEach((ms, i) => {
    if (ms > 0 && (at === -1 || ms < timeouts[at]!)) at = i;
  });
  const running = Promise.resolve().then(run);
  if (at === -1) return running;
  const first = views[at]!;
  try {
    return await withinTimeout(running, first, timeouts[at]!);
  } catch (error) {
    if (error instanceof TimeoutError) for (const view of views) if (view !== first) view.abort(error);
    throw error;
  }
}

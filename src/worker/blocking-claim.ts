/**
 * The blocking claim as a worker uses it (wire 6, a queue without lanes, a module that offers
 * `EMQ.BCLAIM`): one idle slot at a time waits inside the server for the queue's next job; the
 * other idle slots wait for a wake. Without it (or once it is retired) the wake channel's safety
 * tick stays.
 */
import { ServerError } from "../errors.js";
import type { ClaimedJob, ClaimOutcome } from "../jobs.js";
import type { Carry } from "./carry.js";
import { heldBack, sleep, type WorkerContext } from "./context.js";
import { retryAfterError } from "./faults.js";
import { type ClaimWatcher, openWatcher } from "./watcher.js";

/** Runs a claimed job and settles it; resolves with what it left its slot. */
type RunJob = (claimed: ClaimedJob, lane: string, claimedAt: number) => Promise<Carry>;

export class BlockingClaim {
  /** The blocking claim's connection, if used. */
  private watcher: ClaimWatcher | undefined;
  /** True while a slot waits on the blocking claim (or backs off between its waits). */
  private held = false;
  /** A wait is in the server and no wake has been charged to it yet (it takes that job itself). */
  private takesOne = false;

  constructor(private readonly ctx: WorkerContext) {}

  /** Opens the blocking claim, when this worker may use it (`openWatcher`); else the safety tick stays. */
  async open(): Promise<void> {
    const { ctx } = this;
    try {
      this.watcher = await openWatcher(ctx.conn, ctx.name, ctx.lanes.set.all(), ctx.opts.blockMs);
    } catch (err) {
      ctx.report(err);
    }
    if (this.watcher) ctx.gate.setTicking(false);
  }

  /** True when an idle slot may wait inside the server: the claim is open and no slot waits there. */
  get free(): boolean {
    return this.watcher !== undefined && !this.held;
  }

  /** Of a wake for `n` jobs, how many the other idle slots take: the waiting slot takes one itself. */
  othersOf(n: number): number {
    const others = this.takesOne ? n - 1 : n;
    this.takesOne = false;
    return others;
  }

  /**
   * This slot waits inside the server for the queue's next job (`EMQ.BCLAIM`, again after each
   * timeout), then runs it — releasing one more idle slot first, since more may follow. Errors
   * back off and wait again; a fatal one returns true (the worker stops). Else what the job it
   * ran left the slot (`Carry`).
   */
  async watch(run: RunJob): Promise<true | Carry> {
    const { ctx } = this;
    const watcher = this.watcher;
    this.held = true;
    let held = true;
    try {
      for (let failures = 0; !ctx.closing() && watcher !== undefined && this.watcher === watcher; ) {
        const lanes = ctx.lanes.set.all();
        if (lanes.length !== 1) {
          this.retire();
          return undefined;
        }
        const lane = lanes[0]!;
        let claimed: ClaimOutcome;
        const claimedAt = Date.now(); // the claim span's start, when traced
        try {
          const sent = watcher.claim(lane, ctx.opts.leaseMs);
          ctx.claims.add(sent);
          this.takesOne = true;
          try {
            claimed = await sent;
          } finally {
            ctx.claims.delete(sent);
            this.takesOne = false;
          }
          failures = 0;
        } catch (err) {
          if (err instanceof ServerError && /^ERR unknown command/.test(err.reply)) {
            ctx.report(err);
            this.retire();
            return undefined;
          }
          if (ctx.fault(err)) return true;
          await sleep(retryAfterError(++failures));
          continue;
        }
        if (!claimed) continue;
        if ("limited" in claimed) {
          await heldBack(ctx, claimed.waitMs);
          continue;
        }
        // Another idle slot may wait in the server now, while this one runs the job.
        held = false;
        this.held = false;
        ctx.lanes.set.woke(lane);
        ctx.gate.releaseOne();
        return await run(claimed, lane, claimedAt);
      }
      return undefined;
    } finally {
      if (held) this.held = false;
    }
  }

  /** Closing: a wait in the server returns now. */
  interrupt(): void {
    void this.watcher?.interrupt(this.ctx.conn);
  }

  async close(): Promise<void> {
    await this.watcher?.close();
  }

  /** Back to the wake channel's safety tick (lanes joined, or the node lacks `EMQ.BCLAIM`). */
  private retire(): void {
    const watcher = this.watcher;
    this.watcher = undefined;
    this.ctx.gate.setTicking(true);
    void watcher?.close();
  }
}

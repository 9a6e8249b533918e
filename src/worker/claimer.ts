/**
 * How a worker's slots claim: one call for as many jobs as there are slots to take them
 * (`CLAIMN`, when the engine runs it: the pause read inside its transition, D12), else the host's
 * pause read then `CLAIM`. Slots that claim on a lane while a pause read is out there join it
 * instead of sending their own, so at high concurrency one `HGET` serves many claims. Every claim
 * is bounded (`abandonable`): a job a reply brings after its slot gave up is handed back.
 */
import { type ClaimBatch, claimBatch, claimVerb, isPaused } from "../jobs.js";
import { abandonableBatch } from "./claims.js";
import type { WorkerContext } from "./context.js";
import { handBackLate } from "./hand-back.js";

/** The verb that leases many jobs in one call; a worker uses it when its engine runs it. */
const BATCH_CLAIM = "CLAIMN";
/** The most jobs one of a worker's claims asks for (a larger worker sends more claims). */
export const MAX_CLAIM_BATCH = 1000;

const NOTHING: ClaimBatch = { jobs: [], limited: null };

export class Claimer {
  /** The pause read in flight per lane, shared by every slot that wants to claim there meanwhile. */
  private readonly pauseReads = new Map<string, Promise<boolean>>();

  constructor(private readonly ctx: WorkerContext) {}

  /** Whether one claim may lease many jobs (`CLAIMN`). */
  get batches(): boolean {
    return this.ctx.conn.engine.runs(BATCH_CLAIM);
  }

  /**
   * Up to `count` jobs of `lane` (one without `CLAIMN`), in one call, bounded; the call is in
   * `ctx.claims` while it is out, so `close()` lets it land first.
   */
  async lease(lane: string, count: number): Promise<ClaimBatch> {
    const sent = abandonableBatch(this.send(lane, count), lane, (late) => handBackLate(this.ctx, lane, late));
    this.ctx.claims.add(sent);
    try {
      return await sent;
    } finally {
      this.ctx.claims.delete(sent);
    }
  }

  private async send(lane: string, count: number): Promise<ClaimBatch> {
    const { conn, opts } = this.ctx;
    if (this.batches) return claimBatch(conn, lane, opts.leaseMs, Math.min(count, MAX_CLAIM_BATCH));
    if (!conn.engine.claimReadsPause && (await this.pauseRead(lane))) return NOTHING;
    const got = await claimVerb(conn, lane, opts.leaseMs);
    if (!got) return NOTHING;
    return "limited" in got ? { jobs: [], limited: got } : { jobs: [got], limited: null };
  }

  /**
   * The host's pause read (the scripted `CLAIM` does not read the flag, D2), shared: its read is
   * at most one round trip older than the claim's request — the window every scripted claim has
   * between its read and its script (docs/architecture.md, "Pause").
   */
  private pauseRead(lane: string): Promise<boolean> {
    let read = this.pauseReads.get(lane);
    if (!read) {
      read = isPaused(this.ctx.conn, lane).finally(() => this.pauseReads.delete(lane));
      this.pauseReads.set(lane, read);
    }
    return read;
  }
}

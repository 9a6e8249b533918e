/**
 * Jobs one slot's batch claim (`CLAIMN`) leased for the worker's other free slots: a slot that
 * claims asks for itself and for every slot waiting idle, runs the first job, and leaves the rest
 * here, releasing one waiting slot per job. Every slot looks here before it claims; `close()`
 * hands back what is left (each job under its own lease token).
 */
import type { ClaimedJob } from "../jobs.js";

/** A job leased for a free slot: its lane and when its claim was sent (the claim span's start). */
interface Handed {
  job: ClaimedJob;
  lane: string;
  claimedAt: number;
}

export class Inbox {
  private readonly held: Handed[] = [];
  /** Extra jobs asked for by claims still on their way (each claim's count less its own one). */
  private asked = 0;

  /** Jobs leased and not yet taken. */
  get size(): number {
    return this.held.length;
  }

  /**
   * How many jobs a slot's claim asks for: its own, and one per slot `waiting` idle that neither a
   * job here nor a claim on its way already serves — at most `max`.
   */
  countFor(waiting: number, max: number): number {
    return Math.max(1, Math.min(max, 1 + waiting - this.held.length - this.asked));
  }

  /** A claim for `count` jobs is sent; `landed` once its reply is in (or it failed). */
  sent(count: number): () => void {
    this.asked += count - 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.asked -= count - 1;
    };
  }

  put(handed: Handed): void {
    this.held.push(handed);
  }

  /** The oldest job leased for a free slot, if any. */
  take(): Handed | undefined {
    return this.held.shift();
  }

  /** Every job not taken (the worker is closing: they are handed back). */
  drain(): Handed[] {
    return this.held.splice(0);
  }
}

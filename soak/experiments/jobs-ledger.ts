/**
 * The books an experiment keeps about its jobs, on the host: which adds the server acknowledged,
 * which handler runs started and ran to their end, which completions the server confirmed. At
 * the end it is compared with what the server holds to count lost, stuck and double completions.
 */
import type { Connection, Job, Worker } from "../../src/index.js";
import { jobKey } from "../../src/protocol.js";
import { type Outcome, whereAre } from "./common.js";

export class JobsLedger {
  /** Adds the server acknowledged (the reply came back). */
  readonly acked = new Set<string>();
  /** Handler runs that ran to their end, per id. */
  readonly runs = new Map<string, number>();
  /** Handler runs started and whose completion the server has not confirmed yet. */
  readonly inFlight = new Set<string>();
  /** Completions the server confirmed (the worker's `completed` event). */
  readonly confirmed = new Set<string>();
  /** Jobs whose completion was in flight at one of the faults (runs may repeat for these). */
  readonly heldAtFault = new Set<string>();
  /** Jobs that started again after the server had confirmed their completion. */
  readonly afterConfirmed = new Set<string>();
  /** The queue of each job, when the jobs are spread over several queues (`settle` with a list). */
  readonly queueOf = new Map<string, string>();

  /** A handler that books its run around `work`. */
  handler(work: (job: Job) => Promise<unknown>): (job: Job) => Promise<unknown> {
    return async (job) => {
      if (this.confirmed.has(job.id)) this.afterConfirmed.add(job.id);
      this.inFlight.add(job.id);
      const result = await work(job);
      this.runs.set(job.id, (this.runs.get(job.id) ?? 0) + 1);
      return result;
    };
  }

  /** Follows a worker's confirmations. */
  follow(worker: Worker): void {
    worker.on("completed", (job) => {
      this.confirmed.add(job.id);
      this.inFlight.delete(job.id);
    });
  }

  /** A fault happens now: every job whose completion is not confirmed may run again. */
  fault(): void {
    for (const id of this.inFlight) this.heldAtFault.add(id);
  }

  /** Every acknowledged job ran to its end at least once. */
  allRan(): boolean {
    for (const id of this.acked) if (!this.runs.has(id)) return false;
    return true;
  }

  /**
   * Fills lost, stuck, completed twice and breaches (a job run twice whose completion was not in
   * flight at any fault, nor `explained` otherwise) from the server's sets and rows of queue `q`
   * (or of several queues, each job's found in `queueOf`). Returns the ids lost, run twice, and
   * gone (acknowledged, in no set and with no row, whether or not they ran).
   */
  async settle(
    out: Outcome,
    conn: Connection,
    q: string | readonly string[],
    explained: (id: string) => boolean = () => false,
  ): Promise<{ lost: string[]; twice: string[]; gone: string[] }> {
    const where = new Map<string, string>();
    for (const name of typeof q === "string" ? [q] : q) {
      for (const [id, set] of await whereAre(conn, name)) where.set(id, set);
    }
    const queueOf = (id: string) => (typeof q === "string" ? q : this.queueOf.get(id)!);
    const stuckBy = new Map<string, number>();
    const lost: string[] = [];
    const gone: string[] = [];
    let orphans = 0;
    for (const id of this.acked) {
      const set = where.get(id);
      if (set === undefined) {
        const row = Number(await conn.send("EXISTS", [jobKey(queueOf(id), id)]));
        if (row === 1) orphans += 1;
        if (row === 0) gone.push(id);
        if (row === 0 && !this.runs.has(id)) lost.push(id);
        continue;
      }
      if (set !== "done") {
        out.stuck += 1;
        stuckBy.set(set, (stuckBy.get(set) ?? 0) + 1);
      } else if (!this.runs.has(id)) {
        out.breaches += 1; // completed on the server without a handler run: cannot happen
        out.notes.push(`job ${id} completed on the server but its handler never ran to its end`);
      }
    }
    out.stuck += orphans;
    out.lost += lost.length;
    const twiceIds: string[] = [];
    let unexplained = 0;
    for (const [id, n] of this.runs) {
      if (n < 2) continue;
      twiceIds.push(id);
      if (!this.heldAtFault.has(id) && !explained(id)) unexplained += 1;
    }
    const twice = twiceIds.length;
    out.completedTwice = twice;
    out.breaches += unexplained;
    out.acknowledged = this.acked.size;
    if (stuckBy.size > 0 || orphans > 0)
      out.notes.push(
        `stuck by set: ${JSON.stringify(Object.fromEntries(stuckBy))}${orphans ? `, rows in no set ${orphans}` : ""}`,
      );
    if (this.heldAtFault.size + twice > 0)
      out.notes.push(
        `completions in flight at a fault ${this.heldAtFault.size}; run twice ${twice} (outside them ${unexplained}; ` +
          `started again after a confirmed completion ${this.afterConfirmed.size})`,
      );
    return { lost, twice: twiceIds, gone };
  }
}

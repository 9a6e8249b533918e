/**
 * `queue.cancel(id)`: the operator's cancel of one job (`CANCEL`, docs/jobs.md "Cancelling a
 * job"), its reply read as what happened.
 */
import type { Connection } from "../connector/connection.js";
import { cancel } from "../jobs.js";
import { inCallWords } from "../jobs/refusals.js";
import type { JobState } from "./row.js";

/** What `queue.cancel(id)` did. */
export interface CancelResult {
  /**
   * True when this call cancelled the job: it was pending, scheduled or active and is now dead
   * with the error `cancelled` (no retry). False: it had finished (`completed`, `dead` — a
   * cancel sent twice answers `dead` the second time) or is a flow's parent waiting for its
   * children (`waiting`), and nothing was written.
   */
  cancelled: boolean;
  /** The job's state when the cancel arrived. */
  state: JobState;
}

const CANCELLABLE = new Set(["pending", "scheduled", "active"]);

/** Cancels job `id`, which lives in `where.lane`; refusals in `cancel(id)`'s words. */
export function cancelJob(
  conn: Connection,
  where: { queue: string; lane: string; id: string },
): Promise<CancelResult> {
  const step = async (): Promise<CancelResult> => {
    const state = await cancel(conn, where.lane, where.id);
    return { cancelled: CANCELLABLE.has(state), state: state as JobState };
  };
  return inCallWords(`cancel(${where.id})`, conn, where, step);
}

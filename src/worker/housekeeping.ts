/**
 * Who runs a lane's housekeeping (promoting due jobs, reaping expired leases): the worker's own
 * loops (`src/timers.ts`), or the node. A wire-6 node whose module reports the `timers` feature
 * in `EMQ.VERSION` (module 0.4.0 on) promotes and reaps by itself on its primary, with no worker
 * running; a worker then leaves its loops off, unless told to run them anyway (`hostTimers`).
 * Wire 4 always runs the loops: the scripts have no clock of their own.
 */
import type { Connection } from "../connector/connection.js";
import { ReapBoundsError } from "../errors.js";
import { queueKey } from "../keyspace.js";

/** What the node's reaper needs from the workers: the attempt budget and the dead kept. */
interface ReapBounds {
  maxAttempts: number;
  keepDead: number;
}

/**
 * Whether the node that holds `lane` runs its timers: wire 6, and `EMQ.VERSION` (asked on that
 * node) lists the `timers` feature. When it does, the lane's `meta` records `bounds` as
 * `max_attempts` and `keep_dead` (the node's reaper reads them: a row's own `max_attempts` still
 * wins; the last worker to start sets them), so a lease the node reaps dies after the same
 * number of attempts as one this worker would have reaped. A refused write rejects with
 * `ReapBoundsError` (the caller runs its own loops instead).
 */
export async function serverRunsTimers(conn: Connection, lane: string, bounds: ReapBounds): Promise<boolean> {
  if (!(await conn.engine.serverTimers(queueKey(lane, "")))) return false;
  const fields = ["max_attempts", bounds.maxAttempts, "keep_dead", bounds.keepDead];
  try {
    await conn.send("HSET", [queueKey(lane, "meta"), ...fields]);
  } catch (err) {
    throw new ReapBoundsError(lane, err);
  }
  return true;
}

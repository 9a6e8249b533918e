/**
 * What a worker's slot carries from one job to the next: the job its settlement leased in the
 * same transition (`COMPLETENEXT`, `FAILNEXT`), a limited claim's wait, or the lane set's pick
 * made when the job finished (the claim then follows the settlement). Nothing: the slot picks a
 * lane again.
 */
import type { ClaimedJob } from "../jobs.js";

/** The verbs that settle a job and lease the next one; a slot uses one when its engine runs it. */
export const FUSED_VERBS = { complete: "COMPLETENEXT", fail: "FAILNEXT" } as const;

/** A lane the slot's next claim tries, and its epoch (`LaneSet.next`). */
export interface Pick {
  lane: string;
  epoch: number;
}

export type Carry =
  | { job: ClaimedJob; lane: string; claimedAt: number }
  | { waitMs: number }
  | { pick: Pick }
  | undefined;

/**
 * What a worker's slot carries from one job to the next: the job its completion leased in the
 * same transition (`COMPLETENEXT`), a limited claim's wait, or the lane set's pick made when the
 * job finished (the claim then follows the completion). Nothing: the slot picks a lane again.
 */
import type { ClaimedJob } from "../jobs.js";

/** The verb that completes a job and leases the next one; a slot uses it when its engine runs it. */
export const FUSED_VERB = "COMPLETENEXT";

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

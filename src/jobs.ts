/**
 * The host steps of each transition: validate on the host, build the declared keys, then send the
 * script (wire 4) or its native verb (wire 6) through the connection. One module per family under
 * `jobs/`, named by the protocol data's `family` as on the native side (module/src/verbs/), re-exported here.
 */
export {
  assertJobId,
  assertLeaseMs,
  assertPayload,
  MAX_INTEGER,
  MAX_LEASE_MS,
  MAX_LIMIT,
  type Payload,
} from "./jobs/common.js";
export {
  add,
  addBulk,
  claim,
  claimBatch,
  claimVerb,
  enqueue,
  isPaused,
  type AddOptions,
  type ClaimBatch,
  type ClaimedJob,
  type ClaimLimited,
  type ClaimOutcome,
  type EnqueueOptions,
  type EnqueueResult,
} from "./jobs/jobs.js";
export {
  readGroups,
  readLimits,
  setGroupLimits,
  setLimits,
  type GroupLimits,
  type GroupState,
  type LimitsInfo,
  type QueueLimits,
  type RateLimit,
} from "./jobs/limits.js";
export { DEFAULT_KEY_TTL_MS, type JobExtras, type ParentRef } from "./jobs/add-options.js";
export { checkDurability, type Durability } from "./jobs/durability.js";
export {
  complete,
  completeNext,
  failNext,
  extend,
  fail,
  requeue,
  reschedule,
  type FailNextOutcome,
  type FailOptions,
  type FailState,
} from "./jobs/lease.js";
export { completeMany, type CompletedMany, type Completion, MAX_COMPLETIONS } from "./jobs/lease.js";
export { log, progress } from "./jobs/report.js";
export {
  cancel,
  recordLanes,
  pause,
  remove,
  resume,
  retry,
  setEvents,
  DEFAULT_EVENTS,
  type EventsOptions,
} from "./jobs/admin.js";
export { promote, reap, type ReapOptions, type ReapResult } from "./jobs/timers.js";
export {
  assertFinishedState,
  clean,
  drain,
  expedite,
  forgetAllKeys,
  forgetKey,
  obliterate,
  updateData,
  type FinishedState,
  type ObliterateStep,
} from "./jobs/operate.js";
export {
  fireInstant,
  type ScheduleOutcome,
  scheduleRecord,
  unscheduleRecord,
} from "./jobs/repeat.js";

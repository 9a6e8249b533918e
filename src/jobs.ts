/**
 * The host steps of each transition: validate on the host, build the declared keys, then send the
 * script (wire 4) or its native verb (wire 6) through the connection. One module per family under
 * `jobs/`, re-exported here.
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
  claimVerb,
  enqueue,
  isPaused,
  type AddOptions,
  type ClaimedJob,
  type ClaimLimited,
  type ClaimOutcome,
  type EnqueueOptions,
  type EnqueueResult,
} from "./jobs/admission.js";
export {
  assertGroup,
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
  extend,
  fail,
  log,
  progress,
  requeue,
  reschedule,
  type FailOptions,
  type FailState,
} from "./jobs/lease.js";
export {
  recordLanes,
  pause,
  promote,
  reap,
  remove,
  resume,
  retry,
  setEvents,
  DEFAULT_EVENTS,
  type EventsOptions,
  type ReapOptions,
  type ReapResult,
} from "./jobs/queue.js";
export {
  assertFinishedState,
  clean,
  drain,
  expedite,
  forgetAllKeys,
  forgetKey,
  obliterate,
  type FinishedState,
  type ObliterateStep,
} from "./jobs/operate.js";
export {
  type FireOutcome,
  fireInstant,
  type ScheduleOutcome,
  scheduleRecord,
  unscheduleRecord,
} from "./jobs/repeat.js";

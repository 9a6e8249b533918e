/**
 * `echomq/protocol`: the low-level surface — the host step of every transition (`enqueue`,
 * `claim`, `complete`, … each one atomic call), the keyspace grammar and cluster slots, the script
 * registry, the verb table (the protocol as data), the brands, the engines, the timers, the
 * blocking claim's host steps and the typed-refusal mapping. For tools and tests that speak the
 * wire contract itself; applications use `echomq`.
 */
export { backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
export { assertValidBrandedId, IdGenerator, idTime, isValidBrandedId } from "./branded-id.js";
export { EVENT_KINDS } from "./events/entry.js";
export { MAX_FLOW_JOBS } from "./flows/producer.js";
export {
  add,
  addBulk,
  claim,
  clean,
  complete,
  completeNext,
  DEFAULT_EVENTS,
  DEFAULT_KEY_TTL_MS,
  drain,
  enqueue,
  expedite,
  extend,
  fail,
  isPaused,
  log,
  MAX_INTEGER,
  MAX_LEASE_MS,
  MAX_LIMIT,
  obliterate,
  pause,
  progress,
  promote,
  reap,
  readGroups,
  readLimits,
  remove,
  requeue,
  reschedule,
  resume,
  retry,
  setEvents,
  setGroupLimits,
  setLimits,
  type AddOptions,
  type ClaimedJob,
  type ClaimLimited,
  type ClaimOutcome,
  type EnqueueOptions,
  type EnqueueResult,
  type EventsOptions,
  type FailOptions,
  type ReapOptions,
} from "./jobs.js";
export {
  MODULE_MAJOR,
  parseModuleVersion,
  WIRE4_BRAND,
  WIRE6_BRAND,
  type ModuleVersion,
} from "./engine/fence.js";
export {
  engineFor,
  type Engine,
  type EngineKind,
  type ScriptCall,
  type Sender,
  type VerbCall,
} from "./engine/index.js";
export { typedServerError } from "./errors.js";
export {
  assertValidQueue,
  crc16,
  hashtag,
  isValidQueue,
  jobKey,
  MAX_QUEUE_BYTES,
  queueKey,
  slot,
  VERSION_KEY,
  type QueueKeyType,
} from "./keyspace.js";
export {
  JOB_CORE_VERBS,
  loadScript,
  NATIVE_ONLY_VERBS,
  Script,
  SCRIPTS,
  scriptFor,
  type Wire6Declaration,
} from "./scripts/index.js";
export { BLOCKING_CLAIM, claimWaiting, moduleExtensions } from "./jobs/wait.js";
export { Timers, type TimerOptions } from "./timers.js";
export {
  anchorOf,
  formOf,
  JOB_CORE,
  placeholder,
  PROTOCOL,
  VERB_SPECS,
  verbSpec,
  type Grammar,
  type KeySlot,
  type KeySpec,
  type ProtocolSpec,
  type TimeSet,
  type ValueSpec,
  type VerbClass,
  type VerbSpec,
} from "./verbs/index.js";

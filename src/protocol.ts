/**
 * `echomq/protocol`: the low-level surface — the host step of every transition (`enqueue`,
 * `claim`, `complete`, … each one atomic call), the keyspace grammar and cluster slots, the script
 * registry, the verb table (the protocol as data), the brands, the ids, the engines, the timers,
 * the blocking claim's host steps, the typed-refusal mapping and the errors only this surface
 * raises (a wire's refusal, a native-only verb on wire 4, a blocking claim the server ended, an
 * outbox entry off its grammar). For tools and tests that speak the wire contract itself;
 * applications use `echomq`, operators `echomq/admin`.
 */
export { backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
export { assertValidBrandedId, IdGenerator, idTime, isValidBrandedId, newId } from "./branded-id.js";
export { EVENT_KINDS } from "./events/entry.js";
export { MAX_FLOW_JOBS } from "./flows/producer.js";
export {
  add,
  addBulk,
  claim,
  claimBatch,
  clean,
  complete,
  completeMany,
  completeNext,
  failNext,
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
  type CompletedMany,
  type Completion,
  type FailNextOutcome,
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
export { optionsFromUrl } from "./connector/connection.js";
export {
  ClaimUnansweredError,
  ClaimWatchdogError,
  InvalidOutboxEntryError,
  NativeOnlyVerbError,
  typedServerError,
  WaitInterruptedError,
  WireRefusalError,
} from "./errors.js";
export {
  assertValidQueue,
  crc16,
  hashtag,
  isValidQueue,
  jobKey,
  keyOf,
  MAX_QUEUE_BYTES,
  queueKey,
  slot,
  VERSION_KEY,
  type DerivedKey,
  type KeyPrefix,
  type KeyType,
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
export { BLOCKING_CLAIM, claimWaiting } from "./jobs/block.js";
export { moduleExtensions } from "./jobs/version.js";
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
  type KeyTypeSpec,
  type ProtocolSpec,
  type TimeSet,
  type ValueSpec,
  type VerbClass,
  type VerbSpec,
} from "./verbs/index.js";

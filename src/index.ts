export { installModuleBrand } from "./connector/install.js";
export {
  connect,
  Connection,
  optionsFromUrl,
  type ConnectOptions,
  type Wire,
} from "./connector/connection.js";
export { WIRE4_BRAND, WIRE6_BRAND } from "./connector/fence.js";
export {
  enqueue,
  add,
  addBulk,
  claim,
  isPaused,
  extend,
  complete,
  fail,
  retry,
  promote,
  reap,
  remove,
  pause,
  resume,
  reschedule,
  requeue,
  MAX_LEASE_MS,
  MAX_INTEGER,
  MAX_LIMIT,
  type AddOptions,
  type ClaimedJob,
  type EnqueueOptions,
  type EnqueueResult,
  type FailOptions,
  type FailState,
  type Payload,
  type ReapOptions,
  type ReapResult,
} from "./jobs.js";
export {
  queueKey,
  jobKey,
  isValidQueue,
  assertValidQueue,
  MAX_QUEUE_BYTES,
  slot,
  hashtag,
  crc16,
  VERSION_KEY,
  type QueueKeyType,
} from "./keyspace.js";
export { newId, isValidBrandedId, assertValidBrandedId, idTime, IdGenerator } from "./branded-id.js";
export {
  Script,
  scripts,
  declaredVerbs,
  NATIVE_ONLY_VERBS,
  type Wire6Declaration,
} from "./scripts/index.js";
export {
  EchoMQError,
  AuthError,
  ConnectionClosedError,
  VersionFenceError,
  ConnectionLostError,
  ConnectionError,
  ServerError,
  InvalidQueueNameError,
  InvalidIdError,
  InvalidArgumentError,
  WireRefusalError,
  LeaseLostError,
  JobNotFoundError,
  OutOfMemoryError,
  NativeOnlyVerbError,
  typedServerError,
} from "./errors.js";
export { Queue, type JobCounts, type JobInfo, type JobState } from "./queue.js";
export {
  Worker,
  InvalidBackoffError,
  InvalidResultError,
  type Handler,
  type Job,
  type WorkerEvents,
  type WorkerLogger,
  type WorkerOptions,
} from "./worker.js";
export { Timers, type TimerOptions } from "./timers.js";
export { backoffDelay, DEFAULT_BACKOFF, type BackoffOption } from "./backoff.js";

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
  claim,
  isPaused,
  MAX_LEASE_MS,
  type ClaimedJob,
  type EnqueueOptions,
  type EnqueueResult,
  type Payload,
} from "./jobs.js";
export {
  queueKey,
  jobKey,
  isValidQueue,
  assertValidQueue,
  slot,
  hashtag,
  crc16,
  VERSION_KEY,
  type QueueKeyType,
} from "./keyspace.js";
export { newId, isValidBrandedId, assertValidBrandedId, idTime, IdGenerator } from "./branded-id.js";
export { Script, scripts, type Wire6Declaration } from "./scripts/index.js";
export {
  EchoMQError,
  VersionFenceError,
  ConnectionLostError,
  ConnectionError,
  ServerError,
  InvalidQueueNameError,
  InvalidIdError,
  InvalidArgumentError,
  WireRefusalError,
} from "./errors.js";

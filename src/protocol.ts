/**
 * `echomq/protocol`: the advanced surface — the keyspace grammar and cluster slots, the script
 * registry, the verb table (the protocol as data), the brands, the engines, the timers, the
 * blocking claim's host steps and the typed-refusal mapping. For tools and tests that speak the
 * wire contract itself; applications use `echomq`.
 */
export { backoffDelay } from "./backoff.js";
export { IdGenerator } from "./branded-id.js";
export {
  MODULE_MAJOR,
  parseModuleVersion,
  WIRE4_BRAND,
  WIRE6_BRAND,
  type ModuleVersion,
} from "./connector/fence.js";
export {
  engineFor,
  type Engine,
  type EngineKind,
  type ScriptCall,
  type Sender,
  type VerbCall,
} from "./engine/index.js";
export { typedServerError } from "./errors.js";
export { crc16, hashtag, jobKey, queueKey, slot, VERSION_KEY, type QueueKeyType } from "./keyspace.js";
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

/**
 * EchoMQ: a job queue on Valkey. This is the user surface — connect, queues, workers, the host
 * step of every transition, ids and typed errors. The keyspace, the scripts, the verb table and
 * the engines are the advanced surface, `echomq/protocol`.
 */
export { installModuleBrand } from "./connector/install.js";
export {
  connect,
  Connection,
  optionsFromUrl,
  type ClusterNode,
  type ConnectOptions,
  type Subscription,
  type Wire,
} from "./connector/connection.js";
export {
  enqueue,
  add,
  addBulk,
  claim,
  isPaused,
  extend,
  complete,
  completeNext,
  fail,
  retry,
  promote,
  reap,
  remove,
  pause,
  resume,
  reschedule,
  requeue,
  progress,
  log,
  setEvents,
  setLimits,
  setGroupLimits,
  readGroups,
  readLimits,
  expedite,
  clean,
  drain,
  obliterate,
  DEFAULT_EVENTS,
  MAX_LEASE_MS,
  MAX_INTEGER,
  MAX_LIMIT,
  type AddOptions,
  DEFAULT_KEY_TTL_MS,
  type JobExtras,
  type ParentRef,
  type ClaimedJob,
  type ClaimLimited,
  type ClaimOutcome,
  type Durability,
  type EnqueueOptions,
  type EnqueueResult,
  type EventsOptions,
  type FailOptions,
  type FailState,
  type FinishedState,
  type GroupLimits,
  type GroupState,
  type LimitsInfo,
  type ObliterateStep,
  type Payload,
  type ReapOptions,
  type QueueLimits,
  type RateLimit,
  type ReapResult,
} from "./jobs.js";
export { isValidQueue, assertValidQueue, MAX_QUEUE_BYTES } from "./keyspace.js";
export { newId, isValidBrandedId, assertValidBrandedId, idTime } from "./branded-id.js";
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
  DurabilityError,
  NativeOnlyVerbError,
  JobNotScheduledError,
  QueueActiveError,
  TimeoutError,
  TracingUnavailableError,
  ReapBoundsError,
  WaitInterruptedError,
  ClaimUnansweredError,
  ClaimWatchdogError,
  InvalidFlowError,
  TooLargeError,
  LeaseExpiredError,
  JobNotDeadError,
  JobActiveError,
  NotValkeyError,
  ServerUnreachableError,
} from "./errors.js";
export {
  Queue,
  type CleanOptions,
  type JobCounts,
  type JobInfo,
  type JobState,
  type LanedCounts,
  type ListedJob,
  type PageOptions,
  type QueueAddOptions,
  type QueueOptions,
  type ScheduleInfo,
  type ScheduleJobOptions,
  type ScheduleOptions,
  type ScheduleResult,
} from "./queue.js";
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
export { DEFAULT_BACKOFF, type BackoffOption } from "./backoff.js";
export {
  FlowProducer,
  MAX_FLOW_JOBS,
  type FlowJob,
  type FlowJobOptions,
  type FlowNode,
} from "./flows/producer.js";
export { InvalidOutboxEntryError } from "./flows/relay.js";
export type { ChildFailurePolicy, ChildrenValues } from "./jobs/flows.js";
export {
  QueueEvents,
  WatchdogError,
  type QueueEventsEvents,
  type QueueEventsOptions,
} from "./events/queue-events.js";
export { EVENT_KINDS, type BusEvent, type EventKind } from "./events/entry.js";
export type { Gap } from "./events/position.js";
export { Metrics, type MetricsOptions } from "./observe/metrics.js";
export { listQueues, type Discovery, type QueueListing } from "./operate/discover.js";
export { type Dashboard, type DashboardOptions, startDashboard } from "./dashboard/server.js";
export { type MetricsServer, type MetricsServerOptions, serveMetrics } from "./dashboard/metrics-server.js";
export type { ListenOptions } from "./dashboard/guard.js";
export type { TracerLike, TracingOption } from "./observe/tracing-option.js";

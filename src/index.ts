/**
 * EchoMQ: a job queue on Valkey. This is what an application uses — connect, Queue, Worker,
 * FlowProducer, QueueEvents, the typed errors (every class, from `errors.ts`), metrics, the
 * dashboard and tracing. The host step of every transition, the keyspace, the scripts, the verb
 * table and the engines are the low-level surface, `echomq/protocol`.
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
export type {
  Durability,
  FailState,
  FinishedState,
  GroupLimits,
  GroupState,
  JobExtras,
  LimitsInfo,
  ObliterateStep,
  ParentRef,
  Payload,
  QueueLimits,
  RateLimit,
  ReapResult,
} from "./jobs.js";
export { newId } from "./branded-id.js";
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
  InvalidBackoffError,
  InvalidResultError,
  InvalidOutboxEntryError,
  WatchdogError,
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
  type Handler,
  type Job,
  type WorkerEvents,
  type WorkerLogger,
  type WorkerOptions,
} from "./worker.js";
export type { BackoffOption } from "./backoff.js";
export {
  FlowProducer,
  type FlowJob,
  type FlowJobOptions,
  type FlowNode,
} from "./flows/producer.js";
export type { ChildFailurePolicy, ChildrenValues } from "./jobs/flows.js";
export {
  QueueEvents,
  type QueueEventsEvents,
  type QueueEventsOptions,
} from "./events/queue-events.js";
export type { BusEvent, EventKind } from "./events/entry.js";
export type { Gap } from "./events/position.js";
export { Metrics, type MetricsOptions } from "./metrics.js";
export { listQueues, type Discovery, type QueueListing } from "./operate/discover.js";
export { type Dashboard, type DashboardOptions, startDashboard } from "./dashboard/server.js";
export { type MetricsServer, type MetricsServerOptions, serveMetrics } from "./dashboard/metrics-server.js";
export type { ListenOptions } from "./dashboard/guard.js";
export type { TracerLike, TracingOption } from "./observe/tracing-option.js";

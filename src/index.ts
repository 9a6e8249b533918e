/**
 * EchoMQ: a job queue on Valkey. This is what an application uses — connect, Queue, Worker,
 * FlowProducer, QueueEvents, the errors an application meets at run time and branches on (the bases
 * `EchoMQError`, `ConnectionError`, `ServerError`, `InvalidArgumentError` among them), metrics and
 * tracing. Every error class, those met only as a subclass or a programming mistake too, is
 * `echomq/errors` (`src/errors.ts`).
 * The operator's tools (branding a node, queue discovery, the dashboard) are `echomq/admin`; the
 * host step of every transition, the keyspace, the scripts, the verb table, the engines, the ids
 * and the errors only they raise are the low-level surface, `echomq/protocol`.
 */
export {
  connect,
  Connection,
  type ClientLike,
  type ClusterNode,
  type ConnectionForm,
  type ConnectionObject,
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
export {
  EchoMQError,
  AuthError,
  ConnectionClosedError,
  VersionFenceError,
  ConnectionLostError,
  ConnectionError,
  ServerError,
  InvalidArgumentError,
  LeaseLostError,
  JobNotFoundError,
  OutOfMemoryError,
  DurabilityError,
  JobNotScheduledError,
  QueueActiveError,
  TimeoutError,
  JobCancelledError,
  TooLargeError,
  LeaseExpiredError,
  JobNotDeadError,
  JobActiveError,
  ScheduleNotFoundError,
  ServerUnreachableError,
  UnrecoverableError,
  DelayedError,
  InvalidDataError,
  JobFailedError,
  WaitUntilFinishedError,
} from "./errors.js";
export type { Serializer, SerializerOption } from "./serializer.js";
export type { JobBackoff } from "./jobs/job-backoff.js";
export type { FinishEvents } from "./operate/wait-finished.js";
export {
  Queue,
  type CancelResult,
  type CleanOptions,
  type JobCounts,
  type JobInfo,
  type JobState,
  type LanedCounts,
  type ListedJob,
  type PageOptions,
  type QueueAddOptions,
  type QueueOptions,
  type ResumeResult,
  type ScheduleInfo,
  type ScheduleJobOptions,
  type ScheduleOptions,
  type ScheduleResult,
} from "./queue.js";
export {
  failed,
  JobFailed,
  Worker,
  type BatchHandler,
  type BatchOption,
  type BatchWorkerOptions,
  type Handler,
  type Job,
  type Retention,
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
export { type MetricsServer, type MetricsServerOptions, serveMetrics } from "./dashboard/metrics-server.js";
export type { ListenOptions } from "./dashboard/guard.js";
export type { TracerLike, TracingOption } from "./observe/tracing-option.js";

/**
 * `echomq/bullmq`: BullMQ's API over EchoMQ's engine — `Queue`, `Worker`, `Job`, `QueueEvents`,
 * `FlowProducer` with BullMQ's names, options, states and events. What it cannot honour is
 * refused by name with what to use (`BullMQRefusalError`); `NAMES` is the table of every name
 * (docs/migrating-from-bullmq.md).
 */
export { Queue, type JobSchedulerJson, type JobTemplate, type QueueOptions } from "./bullmq/queue.js";
export { Worker, type Processor, type WorkerListener, type WorkerOptions } from "./bullmq/worker.js";
export { Job, type FinishEvents } from "./bullmq/job.js";
export { QueueEvents, type QueueEventsOptions } from "./bullmq/events.js";
export { FlowProducer, type FlowJobNode, type JobNode } from "./bullmq/flow.js";
export type { Backoff, ConnectionOptions, JobsOptions, RepeatOptions } from "./bullmq/options.js";
export { BULLMQ_STATES, type BullMQState } from "./bullmq/states.js";
export { NAMES, type Entry, type Scope } from "./bullmq/names.js";
export {
  BullMQRefusalError,
  DelayedError,
  InvalidArgumentError,
  InvalidIdError,
  JobNotFoundError,
  UnrecoverableError,
} from "./errors.js";

/**
 * The one interface every system's adapter implements: a producer (one job per call, or a
 * batch), a consumer (a worker at a concurrency, with a no-op handler), and the hooks the
 * measurements need. Adapters use each library as its documentation tells a user to.
 */

export const SYSTEM_IDS = ["echomq-w4", "echomq-w6", "bullmq", "beequeue"] as const;
export type SystemId = (typeof SYSTEM_IDS)[number];

export const LABELS: Record<SystemId, string> = {
  "echomq-w4": "EchoMQ wire 4",
  "echomq-w6": "EchoMQ wire 6",
  bullmq: "BullMQ",
  beequeue: "bee-queue",
};

export interface Endpoint {
  host: string;
  port: number;
}

/** What a job carries: the add time (ms, `performance.now()` of the adding process) and padding. */
export interface JobData {
  t: number;
  pad: string;
}

export interface Producer {
  /** One job, one call. */
  add(data: JobData): Promise<void>;
  /** One batch: the library's bulk call, or a pipeline when it has none. */
  addBulk(data: JobData[]): Promise<void>;
  close(): Promise<void>;
}

export interface ConsumerOptions {
  concurrency: number;
  /** Called at the start of each handler (latency runs); absent = the handler does nothing. */
  onStart?: (data: JobData) => void;
  /** Called once per job the library reports completed. */
  onCompleted: () => void;
  /** Called once per job the library reports failed (or an error the worker emits). */
  onFailed: (err: unknown) => void;
}

export interface Consumer {
  /** Stops taking jobs, lets running handlers finish, closes every connection. */
  close(): Promise<void>;
}

export interface SystemAdapter {
  readonly id: SystemId;
  /** After every FLUSHALL, before anything else touches the server (a module node is re-branded). */
  prepare(): Promise<void>;
  producer(): Promise<Producer>;
  /** Starts a worker at once; it runs until `close()`. */
  consumer(opts: ConsumerOptions): Promise<Consumer>;
  /** Jobs waiting in the queue (a check after a fill; not timed). */
  waiting(): Promise<number>;
  /** The settings the adapter uses, for the report. */
  readonly settings: string;
}

export const QUEUE_NAME = "bench";

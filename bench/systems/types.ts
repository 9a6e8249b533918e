/**
 * The one interface every system's adapter implements: a producer (one job per call, or a
 * batch, ready now or due at an instant), a consumer (a worker at a concurrency, with a no-op
 * handler unless a measure gives it a body), a hold (the queue paused, for the resume ramp), and
 * the hooks the measurements need. Adapters use each library as its documentation tells a user to.
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

/**
 * What a producer sends: the bench's 100-byte job, or another JSON object (the bullmq-bench
 * measure's nested payloads, bench/bullmq-bench.ts).
 */
export type Payload = JobData | Record<string, unknown>;

export interface Producer {
  /** One job, one call. */
  add(data: Payload): Promise<void>;
  /**
   * One batch: the library's bulk call, or a pipeline when it has none. With `dueAt` (epoch ms,
   * the `Date.now()` clock) every job of the batch is delayed to fall due at that instant: the
   * library's own delay option, computed when the batch is sent. Throws if `dueAt` has passed.
   */
  addBulk(data: Payload[], dueAt?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ConsumerOptions {
  concurrency: number;
  /**
   * The handler's body, called with the job's data when the handler starts; the handler returns
   * what it returns (a promise is awaited), and that is the job's result. Absent: the handler
   * does nothing.
   */
  handler?: (data: JobData) => unknown;
  /**
   * The worker must run delayed jobs when they fall due (the delayed burst). EchoMQ and BullMQ
   * workers always promote them; bee-queue needs `activateDelayedJobs: true`.
   */
  delayed?: boolean;
  /** The worker starts under this hold (from the same adapter's `hold()`): it takes nothing until released. */
  hold?: Hold;
  /** Called once per job the library reports completed. */
  onCompleted: () => void;
  /** Called once per job the library reports failed (or an error the worker emits). */
  onFailed: (err: unknown) => void;
}

export interface Consumer {
  /** Stops taking jobs, lets running handlers finish, closes every connection. */
  close(): Promise<void>;
}

/** A queue held so that a running worker takes none of its jobs (the resume ramp). */
export interface Hold {
  /** What holds the jobs and what releases them, for the report. */
  readonly how: string;
  /** True: the library's queue-wide pause and resume; false: the closest equivalent `how` names. */
  readonly queuePause: boolean;
  /** Lets the held jobs run (the instant this is called is the release). */
  release(): Promise<void>;
  close(): Promise<void>;
}

export interface SystemAdapter {
  readonly id: SystemId;
  /** After every FLUSHALL, before anything else touches the server (a module node is re-branded). */
  prepare(): Promise<void>;
  producer(): Promise<Producer>;
  /** Starts a worker at once; it runs until `close()`. */
  consumer(opts: ConsumerOptions): Promise<Consumer>;
  /**
   * Holds the queue, on a fresh database before the fill: the queue-wide pause where the library
   * has one; a consumer given the hold takes nothing until `release()`.
   */
  hold(): Promise<Hold>;
  /** Jobs waiting in the queue (a check after a fill; not timed). */
  waiting(): Promise<number>;
  /** The settings the adapter uses, for the report. */
  readonly settings: string;
}

export const QUEUE_NAME = "bench";

/**
 * Whole ms from now to `dueAt` (epoch ms), for a delay option that counts from the add (EchoMQ:
 * from the server's clock when the add runs; BullMQ: from the job's timestamp, `Date.now()`).
 */
export function delayUntil(dueAt: number): number {
  const delay = Math.round(dueAt - Date.now());
  if (delay < 1) throw new Error(`the due instant passed ${-delay} ms before the batch was sent`);
  return delay;
}

/**
 * The worker's options, their defaults, and the bounds each is checked against when the worker
 * is built (a typed `InvalidArgumentError` naming the option, before anything runs).
 */
import { assertBackoff, type BackoffOption, DEFAULT_BACKOFF } from "../backoff.js";
import { MAX_TIMER_MS } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { MAX_INTEGER } from "../jobs/common.js";
import {
  FIXED_KEYSPACE,
  LIMITS_ARE_THE_QUEUES,
  checkKeys,
  type KeyType,
  type OptionTable,
} from "../option-keys.js";
import { type CheckedTracing, checkTracing, type TracingOption } from "../observe/tracing-option.js";
import { WATCHDOG_GRACE_MS } from "./watcher.js";
import type { SerializerOption } from "../serializer.js";
import { type BatchOption, checkBatch, type ResolvedBatch } from "./batch.js";

/** Where errors go that no `error` listener hears. */
export interface WorkerLogger {
  warn(message: string, error: unknown): void;
}

export interface WorkerOptions {
  /** Jobs run at once. Default 1, at most 10,000. */
  concurrency?: number;
  /** Lease per claim, renewed every third of it while the handler runs (ms). Default 30000. */
  leaseMs?: number;
  /** Attempts before a job is dead (a row's own `maxAttempts` wins). Default 3. */
  attempts?: number;
  /** Delay before a retry. Default exponential from 1 s, ±20% jitter, capped at 1 h. */
  backoff?: BackoffOption;
  /**
   * Completed jobs kept for inspection: a count (0 deletes each at once), or `{ count, age }`
   * (`age` in ms: housekeeping deletes jobs that completed longer ago; an object without `count`
   * bounds them by age only). Default 1000.
   */
  keepCompleted?: number | Retention;
  /** Dead jobs kept: a count (0 deletes each at once), or `{ count, age }` as `keepCompleted`. Default 10000. */
  keepDead?: number | Retention;
  /** How long `close()` waits for running handlers before handing their jobs back (ms). Default 5000. */
  closeGraceMs?: number;
  /** Promote due scheduled jobs every … ms. Default 1000. */
  promoteEveryMs?: number;
  /** Reap expired leases every … ms. Default 5000. */
  reapEveryMs?: number;
  /**
   * Run this worker's own promote and reap loops even on a wire-6 node whose module runs them
   * (module 0.4.0 on: `EMQ.VERSION` lists the `timers` feature). Default false: there the loops
   * stay off and the node promotes and reaps by itself; on wire 4 they always run.
   */
  hostTimers?: boolean;
  /** An idle worker re-checks the queue at most this often without a wake message (ms). Default 2000. */
  idleCheckMs?: number;
  /**
   * Wire 6, on a module that offers the blocking claim (`EMQ.BCLAIM`, module 0.4.0+), for a queue
   * without lanes: one idle slot waits inside the server for the next job, on a connection of the
   * worker's own, and the safety tick is off — an idle worker sends one claim per `blockMs`. How
   * long one wait lasts before it is sent again (ms); a watchdog drops a wait unanswered 5 s past
   * it. 0 keeps the wake channel's safety tick instead, as on wire 4. Default 10000.
   */
  blockMs?: number;
  /**
   * Where errors go when nobody listens for `error`. Default: `console.warn`, one line per
   * distinct error per minute (with a count of the repeats).
   */
  logger?: WorkerLogger;
  /**
   * OpenTelemetry traces of every job this worker claims: `claim`, `process` (linked to the job's
   * `create` span) and `complete` / `fail` spans. `true`: the global tracer provider's tracer;
   * `{ tracer }`: that tracer. Needs `@opentelemetry/api` installed (else the worker stops with
   * `TracingUnavailableError`); a job whose consumption is traced (its claim span records) costs
   * one `HGET` more, of its trace context. Default false.
   */
  tracing?: TracingOption;
  /**
   * How a job's payload is read as its `data`: `"json"`, `"raw"` or your own `{ serialize,
   * deserialize }` (see `QueueOptions.serializer`). Default: the queue's.
   */
  serializer?: SerializerOption;
}

/**
 * Finished jobs kept by count, by age, or both. `count`: the newest this many are kept (the
 * completion or failure trims the rest). `age` (ms): jobs finished longer ago are deleted by the
 * worker's housekeeping (`CLEAN`, every `min(age / 2, 60 s)`, at least 1 s apart).
 */
export interface Retention {
  /** Jobs kept at most; 0 deletes each at once. Default: no bound when `age` is given. */
  count?: number;
  /** Jobs finished longer ago than this are deleted (ms, server time; 1 or more). */
  age?: number;
}

/** A batch worker's options: a `Worker`'s, and `batch` (its handler takes `(jobs) => …`, `BatchHandler`). */
export interface BatchWorkerOptions extends WorkerOptions {
  /**
   * Batch processing: the handler takes up to `size` jobs at once (`(jobs) => …`, see `BatchHandler`),
   * leased in one call; a batch with fewer ready waits up to `maxWaitMs` for more. `concurrency`
   * is then how many batches run at once. Each job keeps its own lease, token, attempts and
   * result. Not with `tracing`. Default: none (one job per handler call).
   */
  batch: BatchOption;
}

/** The most slots one worker runs; past this, run more workers (each slot is a promise chain). */
const MAX_CONCURRENCY = 10_000;
/** The shortest lease (ms): renewals run every third of it. */
const MIN_LEASE_MS = 10;

export type ResolvedOptions = Required<
  Omit<WorkerOptions, "backoff" | "logger" | "tracing" | "serializer" | "keepCompleted" | "keepDead">
> & {
  /** The counts: done / dead keep at most this many (the transitions trim them). */
  keepCompleted: number;
  keepDead: number;
  /** The ages (ms), when given: housekeeping deletes what finished longer ago (`CLEAN`). */
  ages: RetentionAges;
  backoff: BackoffOption;
  logger: WorkerLogger | undefined;
  tracing: CheckedTracing | null;
  batch: ResolvedBatch | null;
};

const WORKER_OPTIONS: OptionTable = {
  of: "Worker",
  keys: {
    concurrency: "number",
    leaseMs: "number",
    attempts: "number",
    backoff: ["object", "function"],
    keepCompleted: ["number", "object"],
    keepDead: ["number", "object"],
    closeGraceMs: "number",
    promoteEveryMs: "number",
    reapEveryMs: "number",
    hostTimers: "boolean",
    idleCheckMs: "number",
    blockMs: "number",
    logger: "object",
    tracing: ["boolean", "object"],
    serializer: ["string", "object"],
    batch: "object",
  } satisfies Record<keyof BatchWorkerOptions, KeyType>,
  foreign: {
    maxAttempts: "attempts",
    lockDuration: "leaseMs",
    lockRenewTime: "a lease is renewed every third of leaseMs: set leaseMs",
    stalledInterval: "reapEveryMs",
    maxStalledCount: "a job whose lease expires is taken back and uses an attempt: attempts bounds it",
    removeOnComplete: "keepCompleted",
    removeOnFail: "keepDead",
    drainDelay: "blockMs",
    limiter: LIMITS_ARE_THE_QUEUES,
    connection: "a Worker runs a Queue: new Worker(queue, handler, options)",
    autorun: "a Worker starts when it is built; close() stops it",
    useWorkerThreads: "EchoMQ has no sandboxed processors: the handler runs in this process",
    prefix: FIXED_KEYSPACE,
  },
};

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidArgumentError(name, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return v;
}

/** The ages of a worker's retention (ms); absent: that state is bounded by count only. */
export interface RetentionAges {
  completed?: number;
  dead?: number;
}

const RETENTION_KEYS = { count: "number", age: "number" } satisfies Record<keyof Retention, KeyType>;

/** `keepCompleted` / `keepDead` checked: a count, or `{ count?, age? }` (one at least). */
function retention(name: string, value: unknown, fallback: number): { count: number; age?: number } {
  if (typeof value !== "object" || value === null) {
    return { count: integer(name, value, fallback, 0, MAX_INTEGER) };
  }
  const keep = checkKeys(value, { of: name, keys: RETENTION_KEYS }, name, `${name}.`);
  if (keep.count === undefined && keep.age === undefined) {
    throw new InvalidArgumentError(
      name,
      "must give count, age (ms) or both, e.g. { count: 1000, age: 86400000 }",
    );
  }
  if (keep.age === undefined)
    return { count: integer(`${name}.count`, keep.count, fallback, 0, MAX_INTEGER) };
  return {
    count: integer(`${name}.count`, keep.count, MAX_INTEGER, 0, MAX_INTEGER),
    age: integer(`${name}.age`, keep.age, 0, 1, MAX_INTEGER),
  };
}

/** Every option checked and defaulted. Timer periods are bounded by Node's longest timer. */
export function resolveOptions(options: WorkerOptions & { batch?: BatchOption }): ResolvedOptions {
  checkKeys(options, WORKER_OPTIONS);
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  assertBackoff(backoff);
  const logger = options.logger;
  const hostTimers = options.hostTimers ?? false;
  if (typeof hostTimers !== "boolean") {
    throw new InvalidArgumentError("hostTimers", `must be a boolean, got ${String(hostTimers)}`);
  }
  if (logger !== undefined && typeof logger?.warn !== "function") {
    throw new InvalidArgumentError("logger", "must have a warn(message, error) function");
  }
  const leaseMs = integer("leaseMs", options.leaseMs, 30_000, MIN_LEASE_MS, MAX_TIMER_MS);
  const batch = checkBatch(options.batch, leaseMs);
  const tracing = checkTracing(options.tracing);
  if (batch && tracing) {
    throw new InvalidArgumentError(
      "batch",
      "does not combine with tracing yet: trace one-job handlers, or drop tracing",
    );
  }
  const completed = retention("keepCompleted", options.keepCompleted, 1000);
  const dead = retention("keepDead", options.keepDead, 10_000);
  return {
    concurrency: integer("concurrency", options.concurrency, 1, 1, MAX_CONCURRENCY),
    leaseMs,
    attempts: integer("attempts", options.attempts, 3, 1, MAX_INTEGER),
    backoff,
    keepCompleted: completed.count,
    keepDead: dead.count,
    ages: { completed: completed.age, dead: dead.age },
    closeGraceMs: integer("closeGraceMs", options.closeGraceMs, 5000, 0, MAX_TIMER_MS),
    promoteEveryMs: integer("promoteEveryMs", options.promoteEveryMs, 1000, 1, MAX_TIMER_MS),
    reapEveryMs: integer("reapEveryMs", options.reapEveryMs, 5000, 1, MAX_TIMER_MS),
    idleCheckMs: integer("idleCheckMs", options.idleCheckMs, 2000, 1, MAX_TIMER_MS),
    hostTimers,
    blockMs: integer("blockMs", options.blockMs, 10_000, 0, MAX_TIMER_MS - WATCHDOG_GRACE_MS),
    logger,
    tracing,
    batch,
  };
}

/**
 * BullMQ's `Worker` over EchoMQ's (src/worker.ts): the processor gets a BullMQ `Job` (its name,
 * attempts and backoff read from its row in one `HMGET` before it runs) and may return any JSON
 * value; each job's own backoff (the row's, which the core worker applies; an envelope's for a
 * flow's parent or a scheduler's job) sets its retry delay; an `UnrecoverableError` (the core's,
 * or BullMQ's: matched by name) fails the job at once; the limiter is the queue's rate, kept on
 * the server for every worker. A processor file (a sandboxed processor) runs each job in a worker
 * thread of its own (src/bullmq/sandbox.ts).
 */
import { EventEmitter } from "node:events";
import { jobKey, queueKey } from "../keyspace.js";
import { jobBackoffOf } from "../jobs/job-backoff.js";
import { Queue as CoreQueue } from "../queue.js";
import { Worker as CoreWorker, type WorkerOptions as CoreWorkerOptions } from "../worker.js";
import { checkKeys, type KeyType } from "../option-keys.js";
import { stackText } from "../worker/outcome.js";
import { type Retention as CoreRetention, resolveOptions } from "../worker/options.js";
import type { Job as CoreJob } from "../worker/job.js";
import { InvalidArgumentError, UnrecoverableError } from "../errors.js";
import { decodeJob, encodeValue } from "./codec.js";
import { Job, type JobHome, wasDiscarded } from "./job.js";
import { Link } from "./link.js";
import { processorFile, runSandboxed } from "./sandbox.js";
import { type Backoff, backoffMs, checkNames, type ConnectionOptions, refusal } from "./options.js";
import type { Untyped } from "./options.js";

export type Processor<D = Untyped, R = Untyped, N extends string = string> = (
  job: Job<D, R, N>,
  token?: string,
) => Promise<R> | R;

type Keep = boolean | number | { count?: number; age?: number };

export interface WorkerOptions {
  connection?: ConnectionOptions;
  concurrency?: number;
  limiter?: { max: number; duration: number };
  autorun?: boolean;
  lockDuration?: number;
  stalledInterval?: number;
  removeOnComplete?: Keep;
  removeOnFail?: Keep;
  [refused: string]: unknown;
}

export interface WorkerListener<D = Untyped, R = Untyped, N extends string = string> {
  active: (job: Job<D, R, N>, prev: string) => void;
  completed: (job: Job<D, R, N>, result: R, prev: string) => void;
  failed: (job: Job<D, R, N> | undefined, error: Error, prev: string) => void;
  progress: (job: Job<D, R, N>, progress: unknown) => void;
  error: (error: Error) => void;
  drained: () => void;
  stalled: (jobId: string, prev: string) => void;
  closed: () => void;
}

/** The mark a processor's error carries to the retry delay: its job's backoff. */
const BACKOFF = Symbol("echomq.bullmq.backoff");

const EVENTS = new Set([
  "active",
  "completed",
  "failed",
  "progress",
  "error",
  "drained",
  "stalled",
  "closed",
]);

/**
 * BullMQ's `removeOnComplete` / `removeOnFail` as the core's `keepCompleted` / `keepDead`:
 * `true` → 0, a number → that count, `{ count?, age? }` → the same, `age` (BullMQ's seconds)
 * in ms. `false` or absent: the core's default.
 */
function keep(name: string, value: Keep | undefined): CoreRetention | number | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return 0;
  if (typeof value === "number") return value;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidArgumentError(name, "must be a boolean, a number or { count, age }");
  const o = checkKeys(value, { of: name, keys: KEEP_KEYS }, name, `${name}.`) as {
    count?: number;
    age?: number;
  };
  if (o.age === undefined) return o.count === undefined ? undefined : { count: o.count };
  if (!Number.isFinite(o.age) || o.age <= 0)
    throw new InvalidArgumentError(
      `${name}.age`,
      `must be a positive number of seconds, got ${String(o.age)}`,
    );
  // BullMQ's age is in seconds; the core's in ms (at least 1).
  const age = Math.max(1, Math.round(o.age * 1000));
  return o.count === undefined ? { age } : { count: o.count, age };
}

const KEEP_KEYS = { count: "number", age: "number" } satisfies Record<"count" | "age", KeyType>;

export class Worker<D = Untyped, R = Untyped, N extends string = string>
  extends EventEmitter
  implements JobHome
{
  private readonly link: Link;
  private readonly coreOptions: CoreWorkerOptions;
  private readonly limiter: { max: number; duration: number } | undefined;
  private worker: Promise<CoreWorker> | undefined;
  private coreQueue: Promise<CoreQueue> | undefined;
  private readonly jobs = new WeakMap<CoreJob, Job<D, R, N>>();
  /** The UnrecoverableErrors a discarded job's failure became (their cause is the failure). */
  private readonly discarded = new WeakSet<Error>();
  private drained = true;
  private closing: Promise<void> | undefined;
  /** A sandboxed processor's file (`processor` was a path or URL). */
  private readonly file: string | undefined;

  constructor(
    readonly name: string,
    private readonly processor: Processor<D, R, N> | string | URL,
    opts: WorkerOptions = {},
  ) {
    super();
    if (typeof processor === "string" || processor instanceof URL) this.file = processorFile(processor);
    else if (typeof processor !== "function")
      throw new InvalidArgumentError(
        "processor",
        "must be a function (job) => result, or a processor file's path",
      );
    const o = checkNames("Worker options", opts, "opts") as WorkerOptions;
    const core: CoreWorkerOptions = {
      attempts: 1, // every job added here carries its own (BullMQ's attempts, default 1)
      backoff: (attempt, error) => backoffMs((error as { [BACKOFF]?: Backoff })?.[BACKOFF], attempt),
    };
    if (o.concurrency !== undefined) core.concurrency = o.concurrency;
    if (o.lockDuration !== undefined) core.leaseMs = o.lockDuration;
    if (o.stalledInterval !== undefined) core.reapEveryMs = o.stalledInterval;
    const completed = keep("removeOnComplete", o.removeOnComplete);
    if (completed !== undefined) core.keepCompleted = completed;
    const dead = keep("removeOnFail", o.removeOnFail);
    if (dead !== undefined) core.keepDead = dead;
    const limiter = o.limiter;
    if (limiter !== undefined && (typeof limiter !== "object" || limiter === null))
      throw new InvalidArgumentError("limiter", "must be { max, duration }");
    this.limiter = limiter;
    resolveOptions(core); // the core's checks now, not when the first run starts
    this.coreOptions = core;
    this.link = new Link(o.connection);
    if (o.autorun ?? true) void this.run().catch((err: unknown) => this.report(err));
  }

  core(): Promise<CoreQueue> {
    this.coreQueue ??= this.link.get().then((conn) => new CoreQueue(this.name, conn));
    return this.coreQueue;
  }

  /** Listens to a BullMQ worker event; one this entry does not emit is refused by name. */
  override on<K extends keyof WorkerListener<D, R, N>>(event: K, listener: WorkerListener<D, R, N>[K]): this {
    if (!EVENTS.has(event)) throw refusal("Worker", `on('${String(event)}')`);
    return super.on(event, listener);
  }

  /** Starts the worker (autorun: false); resolves when it has closed. */
  run(): Promise<void> {
    if (this.worker) return Promise.reject(new InvalidArgumentError("run", "the worker is already running"));
    this.worker = this.start();
    return this.worker.then((w) => w.closed);
  }

  isRunning(): boolean {
    return this.worker !== undefined && this.closing === undefined;
  }

  /** Resolves once the worker is connected and claiming. */
  async waitUntilReady(): Promise<void> {
    await (await this.worker)?.ready;
    await this.link.get();
  }

  /** Stops claiming, lets running jobs finish (5 s), hands the rest back, closes its connection. */
  close(force = false): Promise<void> {
    if (force) return Promise.reject(refusal("Worker", "close(true)"));
    this.closing ??= (async () => {
      const worker = await this.worker?.catch(() => undefined);
      await worker?.close().catch(() => {});
      await this.link.close();
      this.emit("closed");
    })();
    return this.closing;
  }

  pause(): Promise<never> {
    return Promise.reject(refusal("Worker", "pause"));
  }
  resume(): never {
    throw refusal("Worker", "resume");
  }
  rateLimit(_ms: number): Promise<never> {
    return Promise.reject(refusal("Worker", "rateLimit"));
  }
  startStalledCheckTimer(): Promise<never> {
    return Promise.reject(refusal("Worker", "startStalledCheckTimer"));
  }

  private async start(): Promise<CoreWorker> {
    const queue = await this.core();
    if (this.limiter) {
      const { groups: _, ...limits } = await queue.limits();
      await queue.setLimits({
        ...limits,
        rate: { max: this.limiter.max, durationMs: this.limiter.duration },
      });
    }
    const worker = new CoreWorker(queue, (job) => this.handle(job), this.coreOptions);
    worker.on("completed", (core) => {
      const job = this.jobOf(core);
      job.finishedOn = Date.now();
      job.attemptsMade = core.attempts;
      this.emit("completed", job, job.returnvalue, "active");
      this.settled(worker);
    });
    worker.on("failed", (core, thrown) => {
      const error = this.discarded.has(thrown as Error) ? (thrown as Error).cause : thrown;
      const job = this.jobOf(core);
      job.finishedOn = Date.now();
      job.attemptsMade = core.attempts;
      job.failedReason = error instanceof Error ? error.message : String(error);
      // The stack the row now keeps (the core's text of what it failed with): one entry, or none.
      const stack = stackText(thrown);
      job.stacktrace = stack === "" ? [] : [stack];
      this.emit("failed", job, error, "active");
      this.settled(worker);
    });
    worker.on("stalled", (requeued, dead) => {
      for (const id of [...requeued, ...dead]) this.emit("stalled", id, "active");
    });
    worker.on("error", (error) => this.report(error));
    worker.on("leaseLost", (_job, error) => this.report(error));
    return worker;
  }

  private report(error: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", error);
    else console.warn(`echomq/bullmq worker ${this.name}:`, error);
  }

  /** After a job settles: `drained` once no job waits (only when someone listens). */
  private settled(worker: CoreWorker): void {
    if (this.listenerCount("drained") === 0 || this.drained) return;
    void this.core()
      .then((q) => q.connection.send("ZCARD", [queueKey(this.name, "pending")]))
      .then((n) => {
        if (Number(n) === 0 && worker.activeCount === 0 && !this.drained) {
          this.drained = true;
          this.emit("drained");
        }
      })
      .catch((err: unknown) => this.report(err));
  }

  /** The BullMQ job of a claimed one (read from its row by `handle`; from its payload when not). */
  private jobOf(core: CoreJob, row?: (Buffer | null)[]): Job<D, R, N> {
    let job = this.jobs.get(core);
    if (!job) {
      const [name, maxAttempts, backoff, priority] = (row ?? []).map((b) => b?.toString("utf8"));
      const carried = decodeJob(core.payload, name, jobBackoffOf(backoff));
      const fields = {
        priority: Number(priority ?? 0),
        ...(maxAttempts === undefined ? {} : { maxAttempts: Number(maxAttempts) }),
      };
      const progressed = (j: Job, p: unknown) => this.emit("progress", j, p);
      job = Job.running(this, core, carried, fields, { progressed }) as Job<D, R, N>;
      this.jobs.set(core, job);
    }
    return job;
  }

  private async handle(core: CoreJob): Promise<string> {
    const conn = (await this.core()).connection;
    const fields = ["name", "max_attempts", "backoff", "priority"];
    const row = (await conn.send("HMGET", [jobKey(core.lane, core.id), ...fields])) as (Buffer | null)[];
    const job = this.jobOf(core, row);
    this.drained = false;
    this.emit("active", job, "waiting");
    try {
      const value = (
        typeof this.processor === "function"
          ? await this.processor(job, String(core.attempts))
          : await runSandboxed(this.file!, job, core.signal)
      ) as R;
      job.returnvalue = value;
      return encodeValue(value);
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      if (wasDiscarded(job) && error.name !== "UnrecoverableError") {
        // discard(): the core fails an UnrecoverableError at once; the failed event shows the cause.
        const final = new UnrecoverableError(error.message, { cause: error });
        this.discarded.add(final);
        throw final;
      }
      // An older release's envelope's backoff (its row has none): the core worker's backoff reads it.
      if (job.opts.backoff !== undefined) Object.defineProperty(error, BACKOFF, { value: job.opts.backoff });
      throw error;
    }
  }
}

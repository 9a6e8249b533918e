/**
 * BullMQ's `Job` over an EchoMQ job: its fields read from the row (the core's `name`, data,
 * `max_attempts`, `backoff`, `attemptsMade`, `processedOn`, `finishedOn`; in a processor the
 * claim's `processedOn`), its methods through the core's calls. Where the core keeps no such
 * field it says so (docs/migrating-from-bullmq.md); methods it cannot honour are refused by name.
 */
import { idTime } from "../branded-id.js";
import type { JobInfo } from "../operate/row.js";
import type { Queue as CoreQueue } from "../queue.js";
import type { Job as CoreJob } from "../worker/job.js";
import {
  type Carried,
  decodeJob,
  decodeValue,
  encodeData,
  encodeEnvelope,
  encodeValue,
  reasonOf,
} from "./codec.js";
import type { Backoff, JobsOptions } from "./options.js";
import type { Untyped } from "./options.js";
import { refusal } from "./options.js";
import { type BullMQState, rowOf, stateOf } from "./states.js";

/** What a Job reaches its queue through. */
export interface JobHome {
  readonly name: string;
  core(): Promise<CoreQueue>;
}

/** What a processor's job reports to its worker. */
interface RunningJob {
  readonly core: CoreJob;
  progressed(job: Job, progress: unknown): void;
}

/** The events a `waitUntilFinished` listens to (a `QueueEvents` of this entry). */
export interface FinishEvents {
  on(event: "completed" | "failed", listener: (e: Untyped) => void): unknown;
  off(event: "completed" | "failed", listener: (e: Untyped) => void): unknown;
}

/** The jobs whose name and data travel in an envelope (rows an older release wrote: src/bullmq/codec.ts). */
const ENVELOPED = new WeakSet<object>();
/** The jobs whose processor called `discard()`: a failure is final. */
const DISCARDED = new WeakSet<object>();

/** `discard()` was called on `job`: the worker throws its failure on as an UnrecoverableError. */
export function wasDiscarded(job: object): boolean {
  return DISCARDED.has(job);
}

export class Job<DataType = Untyped, ReturnType = Untyped, NameType extends string = string> {
  /** EchoMQ's id (not a jobId given to add: that is the idempotency key). */
  readonly id: string;
  readonly queueName: string;
  name: NameType;
  data: DataType;
  opts: JobsOptions;
  timestamp: number;
  attemptsMade = 0;
  attemptsStarted = 0;
  processedOn: number | undefined;
  finishedOn: number | undefined;
  returnvalue: ReturnType | undefined;
  failedReason: string | undefined;
  /** The latest failure's stack, as the row keeps it (one entry; empty when it had none). */
  stacktrace: string[] = [];
  progress: unknown = 0;
  delay = 0;
  priority = 0;
  private readonly running: RunningJob | undefined;

  constructor(
    private readonly home: JobHome,
    id: string,
    name: NameType,
    data: DataType,
    opts: JobsOptions = {},
    running?: RunningJob,
  ) {
    this.id = id;
    this.queueName = home.name;
    this.name = name;
    this.data = data;
    this.opts = opts;
    this.timestamp = idTime(id);
    this.delay = opts.delay ?? 0;
    this.priority = opts.priority ?? 0;
    this.running = running;
  }

  /** The job as a row reads (`finishedAt`: a listed finished job's score, when the row has none). */
  static fromRow(home: JobHome, info: JobInfo, finishedAt?: number): Job {
    const { name, data, backoff, envelope } = decodeJob(info.payload, info.name, info.backoff);
    const job = new Job(home, info.id, name, data, optionsOf(info.maxAttempts, info.priority, backoff));
    if (envelope) ENVELOPED.add(job);
    const settled = info.state === "completed" || info.state === "dead";
    job.attemptsStarted = info.attempts;
    job.attemptsMade = info.attemptsMade;
    job.processedOn = info.processedOn;
    const finished = info.finishedOn ?? finishedAt;
    if (finished !== undefined && settled) job.finishedOn = finished;
    if (info.result !== undefined) job.returnvalue = decodeValue(info.result);
    if (info.error !== undefined) job.failedReason = reasonOf(info.error);
    if (info.stack !== undefined) job.stacktrace = [info.stack];
    if (info.progress !== undefined) job.progress = decodeValue(info.progress);
    return job;
  }

  /** The job a processor runs: `carried` and `row` read from its row when it was claimed. */
  static running(
    home: JobHome,
    claimed: CoreJob,
    carried: Carried,
    row: { maxAttempts?: number; priority: number },
    running: Omit<RunningJob, "core">,
  ): Job {
    const opts = optionsOf(row.maxAttempts, row.priority, carried.backoff);
    const job = new Job(home, claimed.id, carried.name, carried.data, opts, { ...running, core: claimed });
    if (carried.envelope) ENVELOPED.add(job);
    job.attemptsStarted = claimed.attempts;
    job.attemptsMade = claimed.attemptsMade;
    job.processedOn = claimed.processedOn;
    return job;
  }

  /** Records the progress (JSON): the row keeps it, the event bus announces it. In a processor only. */
  async updateProgress(progress: unknown): Promise<void> {
    if (!this.running) throw refusal("Job", "updateProgress outside its processor");
    await this.running.core.progress(encodeValue(progress));
    this.progress = progress;
    this.running.progressed(this, progress);
  }

  /** Appends a line to the job's log; resolves with the line's number. In a processor only. */
  async log(line: string): Promise<number> {
    if (!this.running) throw refusal("Job", "log outside its processor");
    return this.running.core.log(line);
  }

  async getState(): Promise<BullMQState | "unknown"> {
    return stateOf(await rowOf((await this.home.core()).connection, this.queueName, this.id));
  }

  async isCompleted(): Promise<boolean> {
    return (await this.getState()) === "completed";
  }
  async isFailed(): Promise<boolean> {
    return (await this.getState()) === "failed";
  }
  async isActive(): Promise<boolean> {
    return (await this.getState()) === "active";
  }
  async isDelayed(): Promise<boolean> {
    return (await this.getState()) === "delayed";
  }
  async isWaiting(): Promise<boolean> {
    return ["wait", "prioritized"].includes(await this.getState());
  }
  async isWaitingChildren(): Promise<boolean> {
    return (await this.getState()) === "waiting-children";
  }

  async remove(): Promise<void> {
    await (await this.home.core()).remove(this.id);
  }

  /** A failed job back to waiting, with one more attempt. */
  async retry(): Promise<void> {
    await (await this.home.core()).retry(this.id);
  }

  async promote(): Promise<void> {
    await (await this.home.core()).promote(this.id);
  }

  /** The settled children's results (JSON), by `<queue>:<id>`. */
  async getChildrenValues<T = unknown>(): Promise<Record<string, T>> {
    const values = (await (await this.home.core()).getChildrenValues(this.id)) ?? {};
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, decodeValue(Buffer.from(v)) as T]));
  }

  /**
   * Resolves with the return value once the job completes; rejects with an `Error` of its
   * failure's message once it fails for good, or after `ttl` ms.
   */
  waitUntilFinished(queueEvents: FinishEvents, ttl?: number): Promise<ReturnType> {
    return new Promise<ReturnType>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        queueEvents.off("completed", onCompleted);
        queueEvents.off("failed", onFailed);
        if (timer) clearTimeout(timer);
      };
      const onCompleted = (e: { jobId: string; returnvalue: unknown }) => {
        if (e.jobId !== this.id) return;
        done();
        resolve(e.returnvalue as ReturnType);
      };
      const onFailed = (e: { jobId: string; failedReason: string }) => {
        if (e.jobId !== this.id) return;
        done();
        reject(new Error(e.failedReason));
      };
      queueEvents.on("completed", onCompleted);
      queueEvents.on("failed", onFailed);
      if (ttl !== undefined)
        timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `Job wait ${this.name} timed out before finishing, no finish notification arrived after ${ttl}ms (id=${this.id})`,
            ),
          );
        }, ttl);
      // It may have finished before the listeners were on: the row says so.
      void this.home
        .core()
        .then((q) => rowOf(q.connection, this.queueName, this.id))
        .then(
          (info) => {
            if (info?.state === "completed")
              onCompleted({ jobId: this.id, returnvalue: decodeValue(info.result) });
            else if (info?.state === "dead")
              onFailed({ jobId: this.id, failedReason: reasonOf(info.error ?? "") });
          },
          (err: unknown) => {
            done();
            reject(err);
          },
        );
    });
  }

  /**
   * Replaces the job's data on its row (`UPDATE`, any state, no lease token): the attempts that
   * start from then on read it, and so does this `Job`. A row an older release wrote with an
   * envelope (a flow's parent, a scheduler's job) keeps it: the new envelope keeps the name and backoff.
   */
  async updateData(data: DataType): Promise<void> {
    const payload = ENVELOPED.has(this)
      ? encodeEnvelope(this.name, data, this.opts.backoff)
      : encodeData(data);
    // The core's json serializer stores a string as it is: the payload is the JSON text.
    if (this.running) await this.running.core.updateData(payload);
    else await (await this.home.core()).updateData(this.id, payload);
    this.data = data;
  }

  /**
   * In a processor: the job to `delayed` at `timestamp` (ms), its lease released (the core's
   * `moveToDelayed`); then throw `DelayedError`. The token is not needed: the worker holds it.
   */
  async moveToDelayed(timestamp: number, _token?: string): Promise<void> {
    if (!this.running) throw refusal("Job", "moveToDelayed outside its processor");
    await this.running.core.moveToDelayed(timestamp);
  }
  moveToWaitingChildren(_token: string, _opts?: unknown): Promise<never> {
    return Promise.reject(refusal("Job", "moveToWaitingChildren"));
  }
  moveToCompleted(_value: unknown, _token: string): Promise<never> {
    return Promise.reject(refusal("Job", "moveToCompleted"));
  }
  moveToFailed(_err: Error, _token: string): Promise<never> {
    return Promise.reject(refusal("Job", "moveToFailed"));
  }
  changeDelay(_delay: number): Promise<never> {
    return Promise.reject(refusal("Job", "changeDelay"));
  }
  changePriority(_opts: unknown): Promise<never> {
    return Promise.reject(refusal("Job", "changePriority"));
  }
  extendLock(_token: string, _duration: number): Promise<never> {
    return Promise.reject(refusal("Job", "extendLock"));
  }
  /** In its processor: the job's failure from now on is final, whatever attempts it has left. */
  discard(): void {
    DISCARDED.add(this);
  }
  getDependencies(): Promise<never> {
    return Promise.reject(refusal("Job", "getDependencies"));
  }
  clearLogs(): Promise<never> {
    return Promise.reject(refusal("Job", "clearLogs"));
  }
}

/** A row's options in BullMQ's names (what the row keeps of them). */
function optionsOf(
  maxAttempts: number | undefined,
  priority: number,
  backoff: Backoff | undefined,
): JobsOptions {
  const opts: JobsOptions = {};
  if (maxAttempts !== undefined && maxAttempts > 0) opts.attempts = maxAttempts;
  if (priority > 0) opts.priority = priority;
  if (backoff !== undefined) opts.backoff = backoff;
  return opts;
}

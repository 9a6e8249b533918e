/**
 * BullMQ's `Queue` over EchoMQ's (src/queue.ts): adds take `(name, data, opts)` and resolve
 * with a `Job`, reads speak BullMQ's state names (src/bullmq/states.ts), schedulers are EchoMQ's
 * schedules. A method this entry does not honour is refused by name (src/bullmq/names.ts).
 */
import { isValidBrandedId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertLabel } from "../jobs/add-options.js";
import { assertValidQueue, queueKey } from "../keyspace.js";
import { Queue as CoreQueue } from "../queue.js";
import type { ScheduleInfo } from "../schedules/api.js";
import { serverTime } from "../schedules/api.js";
import { decodeJob, encodeData } from "./codec.js";
import { Job, type JobHome } from "./job.js";
import { Link } from "./link.js";
import {
  addOptions,
  type ConnectionOptions,
  checkNames,
  jobOptions,
  type JobsOptions,
  type RepeatOptions,
  refusal,
} from "./options.js";
import type { Untyped } from "./options.js";
import { type BullMQState, countOf, idOfKey, idsOf, isPausedQueue, rowOf, statesOf } from "./states.js";

export interface QueueOptions {
  connection?: ConnectionOptions;
  defaultJobOptions?: JobsOptions;
  [refused: string]: unknown;
}

/** A job scheduler as `getJobSchedulers` lists it. */
export interface JobSchedulerJson {
  key: string;
  id: string;
  name: string;
  next: number;
  pattern?: string;
  every?: number;
  tz?: string;
  limit?: number;
  iterationCount: number;
  template: { data: unknown; opts: JobsOptions };
}

/** The template of a scheduler's jobs. */
export interface JobTemplate {
  name?: string;
  data?: unknown;
  opts?: Pick<JobsOptions, "attempts" | "priority" | "backoff">;
}

const TEMPLATE_OPTS = new Set(["attempts", "priority", "backoff"]);

/** The scheduler a repeatable add is: `repeat:<name>:<pattern | every>`. */
function repeatKey(name: string, repeat: RepeatOptions): string {
  return `repeat:${name}:${repeat.pattern ?? repeat.every}`;
}

export class Queue<DataType = Untyped, ResultType = Untyped, NameType extends string = string>
  implements JobHome
{
  readonly link: Link;
  private readonly defaults: JobsOptions | undefined;
  private coreQueue: Promise<CoreQueue> | undefined;

  constructor(
    readonly name: string,
    opts: QueueOptions = {},
  ) {
    const o = checkNames("Queue options", opts, "opts");
    this.defaults = o.defaultJobOptions as JobsOptions | undefined;
    jobOptions(this.defaults, {}); // the defaults are checked once, here
    assertValidQueue(name);
    this.link = new Link(o.connection);
  }

  /** The core queue this one drives. */
  core(): Promise<CoreQueue> {
    this.coreQueue ??= this.link.get().then((conn) => new CoreQueue(this.name, conn));
    return this.coreQueue;
  }

  private async conn(): Promise<Connection> {
    return (await this.core()).connection;
  }

  waitUntilReady(): Promise<Connection> {
    return this.link.get();
  }

  /**
   * Adds a job: `data` is kept as JSON. With `jobId` (or `deduplication.id`) a second add within
   * the key's lifetime writes nothing and resolves with the first job (same id). With `repeat`
   * it creates the job scheduler `repeat:<name>:<pattern | every>` and resolves with no job.
   */
  async add(
    name: NameType,
    data: DataType,
    opts?: JobsOptions,
  ): Promise<Job<DataType, ResultType, NameType>> {
    const o = jobOptions(this.defaults, opts);
    if (o.repeat !== undefined) {
      const { repeat, ...template } = o;
      await this.upsertJobScheduler(repeatKey(name, repeat), repeat, { name, data, opts: template });
      return undefined as never;
    }
    const { core } = addOptions(o, name);
    const added = await (await this.core()).add(encodeData(data), core);
    return new Job(this, added.id, name, data, o);
  }

  /** Adds many jobs in one round trip (each checked before anything is sent). */
  async addBulk(
    jobs: readonly { name: NameType; data: DataType; opts?: JobsOptions }[],
  ): Promise<Job<DataType, ResultType, NameType>[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError("jobs", "must be an array");
    const checked = jobs.map((job, i) => {
      const o = jobOptions(this.defaults, job?.opts, `jobs[${i}].opts`);
      if (o.repeat !== undefined)
        throw new InvalidArgumentError(
          `jobs[${i}].opts.repeat`,
          "use add() or upsertJobScheduler() for a repeatable job",
        );
      const { core } = addOptions(o, job?.name);
      return { o, payload: encodeData(job.data), opts: core };
    });
    const added = await (await this.core()).addBulk(checked.map(({ payload, opts }) => ({ payload, opts })));
    return added.map((a, i) => new Job(this, a.id, jobs[i]!.name, jobs[i]!.data, checked[i]!.o));
  }

  /** The job by EchoMQ id, or by the jobId (idempotency key) an add was given; undefined when gone. */
  async getJob(jobId: string): Promise<Job<DataType, ResultType, NameType> | undefined> {
    const core = await this.core();
    const id = isValidBrandedId(jobId) ? jobId : await idOfKey(core.connection, this.name, String(jobId));
    const info = id === null ? null : await core.getJob(id);
    return info === null ? undefined : (Job.fromRow(this, info) as Job<DataType, ResultType, NameType>);
  }

  /** One count per state asked, by BullMQ's names (all when none is named). */
  async getJobCounts(...types: (BullMQState | "waiting" | BullMQState[])[]): Promise<Record<string, number>> {
    const states = statesOf(types);
    const conn = await this.conn();
    const counts = await Promise.all(states.map((s) => countOf(conn, this.name, s)));
    return Object.fromEntries(states.map((s, i) => [s, counts[i]!]));
  }

  async getJobCountByTypes(...types: (BullMQState | "waiting" | BullMQState[])[]): Promise<number> {
    return Object.values(await this.getJobCounts(...types)).reduce((a, b) => a + b, 0);
  }

  /** Waiting, delayed, prioritized and waiting-children jobs (BullMQ 6's count). */
  count(): Promise<number> {
    return this.getJobCountByTypes("waiting", "delayed", "prioritized", "waiting-children");
  }

  /** The jobs of each state asked, `start` to `end` of each (−1: its last), newest first unless `asc`. */
  async getJobs(
    types?: BullMQState | "waiting" | (BullMQState | "waiting")[],
    start = 0,
    end = -1,
    asc = false,
  ): Promise<Job<DataType, ResultType, NameType>[]> {
    const states = statesOf(types === undefined ? [] : [types].flat());
    const conn = await this.conn();
    const lists = await Promise.all(states.map((s) => idsOf(conn, this.name, s, start, end, asc)));
    const jobs = await Promise.all(
      lists.flat().map(async ({ id, score }) => {
        const info = await rowOf(conn, this.name, id);
        return info === null ? undefined : Job.fromRow(this, info, score);
      }),
    );
    return jobs.filter((j) => j !== undefined) as Job<DataType, ResultType, NameType>[];
  }

  getWaiting(start?: number, end?: number) {
    return this.getJobs("waiting", start, end, true);
  }
  getPrioritized(start?: number, end?: number) {
    return this.getJobs("prioritized", start, end, true);
  }
  getActive(start?: number, end?: number) {
    return this.getJobs("active", start, end, true);
  }
  getDelayed(start?: number, end?: number) {
    return this.getJobs("delayed", start, end, true);
  }
  getCompleted(start?: number, end?: number) {
    return this.getJobs("completed", start, end, false);
  }
  getFailed(start?: number, end?: number) {
    return this.getJobs("failed", start, end, false);
  }
  getWaitingChildren(start?: number, end?: number) {
    return this.getJobs("waiting-children", start, end, true);
  }
  async getWaitingCount(): Promise<number> {
    return this.getJobCountByTypes("waiting");
  }
  async getPrioritizedCount(): Promise<number> {
    return this.getJobCountByTypes("prioritized");
  }
  async getActiveCount(): Promise<number> {
    return this.getJobCountByTypes("active");
  }
  async getDelayedCount(): Promise<number> {
    return this.getJobCountByTypes("delayed");
  }
  async getCompletedCount(): Promise<number> {
    return this.getJobCountByTypes("completed");
  }
  async getFailedCount(): Promise<number> {
    return this.getJobCountByTypes("failed");
  }
  async getWaitingChildrenCount(): Promise<number> {
    return this.getJobCountByTypes("waiting-children");
  }

  async pause(): Promise<void> {
    await (await this.core()).pause();
  }
  async resume(): Promise<void> {
    await (await this.core()).resume();
  }
  async isPaused(): Promise<boolean> {
    return isPausedQueue(await this.conn(), this.name);
  }

  /** Deletes a job that is not active: 1 when it was deleted, 0 when there was none. */
  async remove(jobId: string): Promise<number> {
    return (await (await this.core()).remove(jobId)) ? 1 : 0;
  }

  /**
   * Deletes `completed` or `failed` jobs that finished at least `grace` ms ago, oldest first, at
   * most `limit` (0: all); resolves with their ids. Other states are not cleaned: `drain()`.
   */
  async clean(grace: number, limit: number, type: "completed" | "failed" = "completed"): Promise<string[]> {
    if (type !== "completed" && type !== "failed")
      throw new InvalidArgumentError(
        "type",
        `clean takes completed or failed here, got ${String(type)}: drain() deletes waiting jobs`,
      );
    const core = await this.core();
    const now = await serverTime(core.connection, this.name);
    const set = type === "completed" ? "done" : "dead";
    const ids = (await core.connection.send("ZRANGE", [
      queueKey(this.name, set),
      "-inf",
      String(now - grace),
      "BYSCORE",
      "LIMIT",
      "0",
      String(limit > 0 ? limit : -1),
    ])) as Buffer[];
    const removed = await Promise.all(ids.map((id) => core.remove(String(id)).catch(() => false)));
    return ids.map(String).filter((_, i) => removed[i]);
  }

  /** Deletes the waiting jobs (with `delayed`, the delayed ones too); running jobs finish. */
  async drain(delayed = false): Promise<void> {
    const core = await this.core();
    if (delayed) {
      await core.drain();
      return;
    }
    for (;;) {
      const ids = (await core.connection.send("ZRANGE", [
        queueKey(this.name, "pending"),
        "0",
        "999",
      ])) as Buffer[];
      if (ids.length === 0) return;
      const removed = await Promise.all(ids.map((id) => core.remove(String(id)).catch(() => false)));
      if (!removed.includes(true)) return; // what is left is being claimed: it runs
    }
  }

  /** Deletes the queue and its schedulers; refuses while a job is active unless `force`. */
  async obliterate(opts: { force?: boolean; count?: number } = {}): Promise<void> {
    if (opts?.count !== undefined)
      throw new InvalidArgumentError("count", "obliterate deletes in batches of its own: give force only");
    await (await this.core()).obliterate({ force: opts?.force ?? false });
  }

  /**
   * Creates or replaces the scheduler `id`: a job from `template` at each instant of `pattern`
   * (cron) or `every` (ms). The queue's workers add the jobs, one per instant however many run.
   * Resolves with nothing: the first job is added at the first instant.
   */
  async upsertJobScheduler(
    id: string,
    repeat: RepeatOptions,
    template: JobTemplate = {},
  ): Promise<undefined> {
    const r = checkNames("repeat options", repeat, "repeatOpts") as RepeatOptions;
    const t = (template ?? {}) as JobTemplate;
    for (const key of Object.keys(t.opts ?? {}))
      if (!TEMPLATE_OPTS.has(key))
        throw new InvalidArgumentError(
          `template.opts.${key}`,
          "a scheduler's jobs take attempts, priority and backoff",
        );
    const o = jobOptions(this.defaults, t.opts, "template.opts");
    const name = t.name ?? id;
    if (typeof name === "string" && name !== "") assertLabel("template.name", name);
    const { core } = addOptions({ attempts: o.attempts, priority: o.priority, backoff: o.backoff }, name);
    const at = (d: Date | number | string | undefined) =>
      d === undefined ? undefined : new Date(d).getTime();
    const spec = {
      ...(r.pattern === undefined ? {} : { cron: r.pattern }),
      ...(r.every === undefined ? {} : { everyMs: r.every }),
      ...(r.tz === undefined ? {} : { tz: r.tz }),
      ...(r.limit === undefined ? {} : { limit: r.limit }),
      ...(r.startDate === undefined ? {} : { startAt: at(r.startDate) }),
      ...(r.endDate === undefined ? {} : { endAt: at(r.endDate) }),
    };
    await (await this.core()).schedule(id, {
      ...spec,
      // The jobs' name and backoff are the schedule's own (each job's row keeps them), the data the payload.
      payload: encodeData(t.data ?? {}),
      opts: {
        priority: core.priority ?? 0,
        maxAttempts: core.maxAttempts ?? 1,
        ...(core.name === undefined ? {} : { name: core.name }),
        ...(core.backoff === undefined ? {} : { backoff: core.backoff }),
      },
    });
    return undefined;
  }

  async removeJobScheduler(id: string): Promise<boolean> {
    return (await this.core()).unschedule(id);
  }

  async getJobSchedulers(start = 0, end = -1, asc = true): Promise<JobSchedulerJson[]> {
    const all = (await (await this.core()).schedules()).map(schedulerOf);
    const ordered = asc ? all : all.reverse();
    return ordered.slice(start, end < 0 ? undefined : end + 1);
  }

  getRepeatableJobs(start?: number, end?: number, asc?: boolean): Promise<JobSchedulerJson[]> {
    return this.getJobSchedulers(start, end, asc);
  }

  removeRepeatable(name: string, repeat: RepeatOptions): Promise<boolean> {
    return this.removeJobScheduler(repeatKey(name, repeat));
  }

  removeRepeatableByKey(key: string): Promise<boolean> {
    return this.removeJobScheduler(key);
  }

  async close(): Promise<void> {
    await this.link.close();
  }

  retryJobs(_opts?: unknown): Promise<never> {
    return Promise.reject(refusal("Queue", "retryJobs"));
  }
  promoteJobs(_opts?: unknown): Promise<never> {
    return Promise.reject(refusal("Queue", "promoteJobs"));
  }
  trimEvents(_maxLength: number): Promise<never> {
    return Promise.reject(refusal("Queue", "trimEvents"));
  }
  getMetrics(_type: string): Promise<never> {
    return Promise.reject(refusal("Queue", "getMetrics"));
  }
  getWorkers(): Promise<never> {
    return Promise.reject(refusal("Queue", "getWorkers"));
  }
  setGlobalConcurrency(_concurrency: number): Promise<never> {
    return Promise.reject(refusal("Queue", "setGlobalConcurrency"));
  }
  setGlobalRateLimit(_max: number, _duration: number): Promise<never> {
    return Promise.reject(refusal("Queue", "setGlobalRateLimit"));
  }
  rateLimit(_expireTimeMs: number): Promise<never> {
    return Promise.reject(refusal("Queue", "rateLimit"));
  }
  getDeduplicationJobId(_id: string): Promise<never> {
    return Promise.reject(refusal("Queue", "getDeduplicationJobId"));
  }
  removeDeduplicationKey(_id: string): Promise<never> {
    return Promise.reject(refusal("Queue", "removeDeduplicationKey"));
  }
}

function schedulerOf(s: ScheduleInfo): JobSchedulerJson {
  // A record an older release wrote keeps no name: its payload is the envelope (decodeJob reads it).
  const { name, data, backoff } = decodeJob(s.payload, s.opts.name, s.opts.backoff);
  const opts: JobsOptions = { attempts: s.opts.maxAttempts };
  if (s.opts.priority > 0) opts.priority = s.opts.priority;
  if (backoff !== undefined) opts.backoff = backoff;
  const out: JobSchedulerJson = {
    key: s.name,
    id: s.name,
    name,
    next: s.next,
    iterationCount: s.fired,
    template: { data, opts },
  };
  if (s.spec.cron !== undefined) out.pattern = s.spec.cron;
  if (s.spec.everyMs !== undefined) out.every = s.spec.everyMs;
  if (s.spec.tz !== undefined) out.tz = s.spec.tz;
  if (s.spec.limit !== undefined) out.limit = s.spec.limit;
  return out;
}

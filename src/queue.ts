/**
 * The producer and operator API of one queue: add jobs, pause and resume, remove, retry dead
 * jobs, read counts and rows. Every transition goes through the host steps in `jobs.ts`.
 *
 * A queue may be **laned** (`lanes: k`): its jobs are then spread over k physical queues, each a
 * queue of its own in its own slot (docs/protocol.md, "Lanes"), so one hot queue uses every shard
 * of a cluster. Adds go round-robin over the lanes, or by `laneKey` (the same key, the same
 * lane); the operator calls act on every lane. A laned queue is not globally ordered: priority
 * and delay hold within a lane; across lanes, jobs run in rotation.
 */
import type { Connection } from "./connector/connection.js";
import { assertValidBrandedId } from "./branded-id.js";
import { InvalidArgumentError } from "./errors.js";
import {
  type AddOptions,
  checkDurability,
  type Durability,
  type EnqueueResult,
  type Payload,
  add,
  addBulk,
  DEFAULT_EVENTS,
  type EventsOptions,
  assertFinishedState,
  expedite,
  forgetKey,
  type FinishedState,
  type GroupLimits,
  type GroupState,
  type LimitsInfo,
  pause,
  type QueueLimits,
  readGroups,
  readLimits,
  remove,
  resume,
  retry,
  setEvents,
  setGroupLimits,
  setLimits,
  updateData,
} from "./jobs.js";
import { type ChildrenValues, childrenOf } from "./jobs/flows.js";
import { assertValidQueue, jobKey, queueKey } from "./keyspace.js";
import { MAX_LANES } from "./lanes/naming.js";
import {
  type CleanOptions,
  cleanLanes,
  cleanOptions,
  drainLanes,
  obliterateLanes,
} from "./operate/actions.js";
import { countsOf, type JobCounts, type LanedCounts, lanedCounts } from "./operate/counts.js";
import { LaneRouter } from "./operate/lane-router.js";
import { type ListedJob, listJobs } from "./operate/listing.js";
import type { PageOptions } from "./operate/paging.js";
import { type JobInfo, jobInfo, type JobState } from "./operate/row.js";
import { recordedLanes } from "./lanes/registry.js";
import { checkTracing } from "./observe/tracing-option.js";
import {
  listSchedules,
  pauseSchedule,
  type ResumeResult,
  resumeSchedule,
  type ScheduleInfo,
  type ScheduleResult,
  schedule,
  unschedule,
  unscheduleAll,
} from "./schedules/api.js";
import type { ScheduleOptions } from "./schedules/options.js";
import { ProducerSpans } from "./observe/tracing.js";
import { checkKeys } from "./option-keys.js";
import { EVENTS_OPTIONS } from "./jobs/admin.js";
import {
  bulkJob,
  OBLITERATE_OPTIONS,
  QUEUE_ADD_OPTIONS,
  QUEUE_OPTIONS,
  type QueueAddOptions,
  type QueueOptions,
} from "./queue-options.js";
import { inCallWords } from "./jobs/refusals.js";
import { type CancelResult, cancelJob } from "./operate/cancel.js";
import { checkSerializer, encodeData, type Serializer } from "./serializer.js";
import { type FinishEvents, waitUntilFinished } from "./operate/wait-finished.js";

export type { JobInfo, JobState } from "./operate/row.js";
export type { ListedJob } from "./operate/listing.js";
export type { ResumeResult, ScheduleInfo, ScheduleResult } from "./schedules/api.js";
export type { ScheduleJobOptions, ScheduleOptions } from "./schedules/options.js";
export type { CleanOptions } from "./operate/actions.js";
export type { CancelResult } from "./operate/cancel.js";
export type { PageOptions } from "./operate/paging.js";
export type { QueueAddOptions, QueueOptions } from "./queue-options.js";
export type { JobCounts, LanedCounts } from "./operate/counts.js";

export class Queue {
  /** How a job's data becomes its payload and back (`QueueOptions.serializer`; a Worker's default). */
  readonly serializer: Serializer;
  /** The queue's default durability (`QueueOptions.durability`), if any. */
  readonly durability: Durability | undefined;
  /** How many lanes the queue's jobs are spread over (1: the queue itself). */
  readonly lanes: number;
  private readonly route: LaneRouter;
  private readonly spans: ProducerSpans | undefined;

  constructor(
    readonly name: string,
    readonly connection: Connection,
    options: QueueOptions = {},
  ) {
    assertValidQueue(name);
    checkKeys(options, QUEUE_OPTIONS);
    checkDurability(options?.durability, "durability");
    this.serializer = checkSerializer(options?.serializer);
    this.durability = options?.durability;
    const lanes = options?.lanes ?? 1;
    if (!Number.isSafeInteger(lanes) || lanes < 1 || lanes > MAX_LANES) {
      throw new InvalidArgumentError(
        "lanes",
        `must be an integer from 1 to ${MAX_LANES}, got ${String(lanes)}`,
      );
    }
    this.lanes = lanes;
    this.route = new LaneRouter(name, connection, lanes);
    const tracing = checkTracing(options?.tracing);
    this.spans = tracing ? new ProducerSpans(name, tracing) : undefined;
  }

  /**
   * Adds one job whose data is `data`, stored as the queue's `serializer` makes it (default
   * `json`: a string or bytes as it is, any other value as its JSON text): `name`, `priority`
   * (lower runs first, default 0), `delay` in ms, `maxAttempts`, `backoff`, `id`, `durability`
   * (default: the queue's); on a laned queue `laneKey` picks the lane.
   */
  async add(data: unknown, opts: QueueAddOptions = {}): Promise<EnqueueResult> {
    checkKeys(opts, QUEUE_ADD_OPTIONS);
    const payload = encodeData(this.serializer, data);
    const lane = this.route.pick(opts?.laneKey ?? opts?.key);
    await this.route.record();
    const o = this.withDurability(opts);
    if (!this.spans) return add(this.connection, lane, payload, o);
    return this.spans.one(lane, this.connection.wire, (trace) =>
      add(this.connection, lane, payload, trace ? { ...o, trace } : o),
    );
  }

  /**
   * Adds many jobs in one pipeline (one write, one round trip). Every job is checked before
   * anything is sent; each is its own transition, so a server refusal of one leaves the others.
   * The queue's durability, if set, is waited for once for the whole batch. A laned queue groups
   * the jobs per lane (round-robin, or by `laneKey`), all lanes in the same round trip.
   */
  async addBulk(given: readonly { payload: unknown; opts?: QueueAddOptions }[]): Promise<EnqueueResult[]> {
    const jobs = this.encodeBulk(given);
    if (this.lanes === 1) return this.addBulkTo(this.name, jobs);
    if (!Array.isArray(jobs)) throw new InvalidArgumentError("jobs", "must be an array");
    const groups = new Map<string, number[]>();
    jobs.forEach((job, i) => {
      const lane = this.route.pick(job?.opts?.laneKey ?? job?.opts?.key);
      groups.set(lane, [...(groups.get(lane) ?? []), i]);
    });
    await this.route.record();
    const results: EnqueueResult[] = new Array(jobs.length);
    await Promise.all(
      [...groups].map(async ([lane, at]) => {
        const added = await this.addBulkTo(
          lane,
          at.map((i) => jobs[i]!),
        );
        at.forEach((i, k) => {
          results[i] = added[k]!;
        });
      }),
    );
    return results;
  }

  /** Each bulk job's `payload` as the serializer makes it (the host step checks the rest). */
  private encodeBulk(jobs: unknown): { payload: Payload; opts?: QueueAddOptions }[] {
    if (!Array.isArray(jobs)) return jobs as never;
    return jobs.map((job: unknown, i) => {
      if (typeof job !== "object" || job === null || !("payload" in job)) return job as never;
      const { payload } = job as { payload: unknown };
      return { ...job, payload: encodeData(this.serializer, payload, `jobs[${i}].payload`) } as never;
    });
  }

  /** `addBulk` on one lane, each job in a `create` span of its own when tracing is on. */
  private addBulkTo(
    lane: string,
    jobs: readonly { payload: Payload; opts?: QueueAddOptions }[],
  ): Promise<EnqueueResult[]> {
    const options = { durability: this.durability };
    if (!Array.isArray(jobs)) return addBulk(this.connection, lane, jobs, options);
    if (!this.spans)
      return addBulk(
        this.connection,
        lane,
        jobs.map((job) => bulkJob(job)),
        options,
      );
    return this.spans.many(lane, this.connection.wire, jobs.length, (traces) =>
      addBulk(
        this.connection,
        lane,
        jobs.map((job, i) => bulkJob(job, traces[i] ?? "")),
        options,
      ),
    );
  }

  /** Stops claims on this queue, every lane of it (running jobs finish). `true` if one was not paused. */
  async pause(): Promise<boolean> {
    const lanes = await this.lanesInUse();
    return (await Promise.all(lanes.map((lane) => pause(this.connection, lane)))).includes(true);
  }

  /** Clears the pause of every lane (and wakes the workers). `true` if one was paused. */
  async resume(): Promise<boolean> {
    const lanes = await this.lanesInUse();
    return (await Promise.all(lanes.map((lane) => resume(this.connection, lane)))).includes(true);
  }

  /**
   * Sets the queue's event bus, on every lane: `maxLen` — about how many entries its stream keeps
   * (`0` turns the bus off) — and `maxAgeMs` — about how long an entry is kept (`0`: no age
   * bound). An option left out takes its default (10,000 entries, 24 h). Transitions read the
   * settings from the next call on; `QueueEvents` follows the stream.
   */
  async setEvents(opts: Partial<EventsOptions> = {}): Promise<void> {
    checkKeys(opts, EVENTS_OPTIONS);
    const settings = { ...DEFAULT_EVENTS, ...opts };
    const lanes = await this.lanesInUse();
    await Promise.all(lanes.map((lane) => setEvents(this.connection, lane, settings)));
  }

  /**
   * Flow control, kept on the server so every worker and process obeys it: replaces the queue's
   * `rate` (at most `max` jobs started per `durationMs`), its `concurrency` (active jobs at most)
   * and its groups' defaults (`group: { rate, concurrency }`). It replaces, never merges: what is
   * left out is cleared, `{}` clears them all; a key it does not take (`burst`) is refused and
   * nothing is written. On every lane (a laned queue's limits hold per lane).
   */
  async setLimits(limits: QueueLimits): Promise<void> {
    const lanes = await this.lanesInUse();
    for (const lane of lanes) await setLimits(this.connection, lane, limits);
  }

  /** One group's own limits (they replace the defaults for it), or `null`: the defaults again. */
  async setGroupLimits(group: string, limits: GroupLimits | null): Promise<void> {
    const lanes = await this.lanesInUse();
    for (const lane of lanes) await setGroupLimits(this.connection, lane, group, limits);
  }

  /** The queue's limits as stored (its first lane's on a laned queue), with every group's own. */
  async limits(): Promise<LimitsInfo> {
    return readLimits(this.connection, (await this.lanesInUse())[0] ?? this.name);
  }

  /**
   * Every group with jobs active or parked by flow control, with both counts (its first lane's on
   * a laned queue, as `limits()`).
   */
  async groups(): Promise<Record<string, GroupState>> {
    return readGroups(this.connection, (await this.lanesInUse())[0] ?? this.name);
  }

  /** Deletes a job that is not active. `false` when there is no such job. */
  async remove(id: string): Promise<boolean> {
    const at = { queue: this.name, lane: await this.route.laneOrFirst(id), id };
    return inCallWords(`remove(${id})`, this.connection, at, () => remove(this.connection, at.lane, id));
  }

  /**
   * Cancels job `id` (docs/jobs.md, "Cancelling a job"): pending or scheduled, it is dead at
   * once with the error `cancelled`; active, too — its worker's lease ends, and the handler's
   * `signal` aborts with `JobCancelledError` at its next heartbeat (within half the lease); a
   * result it returns after is not recorded. No retry. A finished job is left as it is
   * (`cancelled: false`). No such job: `JobNotFoundError`.
   */
  async cancel(id: string): Promise<CancelResult> {
    const at = { queue: this.name, lane: await this.route.laneOrFirst(id), id };
    return cancelJob(this.connection, at);
  }

  /**
   * Replaces job `id`'s data (`UPDATE`, through the queue's serializer), in any state, with no
   * lease token (any process may): the attempts that start from now on read it; a running
   * handler keeps what it was given. No such job: `JobNotFoundError`.
   */
  async updateData(id: string, data: unknown): Promise<void> {
    const payload = encodeData(this.serializer, data);
    const at = { queue: this.name, lane: await this.route.laneOrFirst(id), id };
    const step = () => updateData(this.connection, at.lane, id, payload);
    return inCallWords(`updateData(${id})`, this.connection, at, step);
  }

  /** Moves a dead job back to pending, granting it `extraAttempts` more attempts (default 1). */
  async retry(id: string, extraAttempts = 1): Promise<void> {
    const at = { queue: this.name, lane: await this.route.laneOrFirst(id), id };
    const step = () => retry(this.connection, at.lane, id, extraAttempts);
    return inCallWords(`retry(${id})`, this.connection, at, step);
  }

  /** How many jobs are in each state (one pipelined round trip); a laned queue also per lane. */
  async counts(): Promise<JobCounts | LanedCounts> {
    if (this.lanes === 1 && (await recordedLanes(this.connection, this.name)).length === 0) {
      return countsOf(this.connection, this.name);
    }
    return lanedCounts(this.connection, await this.lanesInUse());
  }

  /** The job's row, or `null` when there is no such job (deleted by retention or removed). */
  async getJob(id: string): Promise<JobInfo | null> {
    assertValidBrandedId(id);
    const lane = await this.route.find(id);
    if (lane === null) return null;
    // The client turns an HGETALL reply into an object of field → value. One round trip: the
    // row, and its score in done and dead (the finish time).
    const [reply, done, dead] = await Promise.all([
      this.connection.send("HGETALL", [jobKey(lane, id)]) as Promise<Record<string, Buffer>>,
      this.connection.send("ZSCORE", [queueKey(lane, "done"), id]),
      this.connection.send("ZSCORE", [queueKey(lane, "dead"), id]),
    ]);
    const finished = reply.state?.toString() === "dead" ? dead : done;
    return jobInfo(id, lane, reply, finished == null ? null : Number(String(finished)));
  }

  /**
   * Waits until job `id` has finished, as `events` (a `QueueEvents` of this queue, already
   * started) sees it: resolves with its result (read as `resultOf` reads it), rejects with
   * `JobFailedError` when it died (its error and stack), or `WaitUntilFinishedError` when
   * `ttlMs` passed first (default: no bound) or the job was removed or is no longer there. A job
   * already finished settles at once, from its row. Reads only.
   */
  async waitUntilFinished(id: string, events: FinishEvents, ttlMs?: number): Promise<unknown> {
    assertValidBrandedId(id);
    const lane = await this.route.laneOrFirst(id);
    return waitUntilFinished(this.connection, lane, id, events, this.serializer, ttlMs);
  }

  /**
   * A flow parent's children results (`FlowProducer`), by `<child queue>:<child id>` (the
   * child's lane for a laned child queue), as stored: text, JSON for a handler's object. Only the
   * children whose outcome has reached the parent so far; `{}` for a job that is not a parent;
   * `null` when there is no such job. `getChildren` also gives the failed children's errors.
   */
  async getChildrenValues(id: string): Promise<Record<string, string> | null> {
    return (await this.getChildren(id))?.values ?? null;
  }

  /** A flow parent's settled children: `values` (results) and `failures` (errors), as above. */
  async getChildren(id: string): Promise<ChildrenValues | null> {
    assertValidBrandedId(id);
    const lane = await this.route.find(id);
    return lane === null ? null : childrenOf(this.connection, lane, id);
  }

  /**
   * A page of the jobs in `state` (`offset` default 0, `limit` 1 to 1000, default 50): pending in
   * claim order, scheduled by due time, active by lease deadline, completed and dead newest
   * first. Reads only: one `ZRANGE` per lane and one `HGETALL` per job listed. A laned queue's
   * lanes are merged (each read from its start: `offset + limit` at most 10,000).
   */
  async getJobs(state: JobState, opts: PageOptions = {}): Promise<ListedJob[]> {
    return listJobs(this.connection, await this.lanesInUse(), state, opts);
  }

  /**
   * Runs a scheduled job now (`EXPEDITE`): it leaves `schedule` for `pending` and wakes a worker.
   * A job that is not scheduled: `JobNotScheduledError`; no such job: `JobNotFoundError`.
   */
  async promote(id: string): Promise<void> {
    const at = { queue: this.name, lane: await this.route.laneOrFirst(id), id };
    return inCallWords(`promote(${id})`, this.connection, at, () => expedite(this.connection, at.lane, id));
  }

  /**
   * Deletes finished jobs — `completed` or `dead` — that finished at least `olderThanMs` ago
   * (default 0: all), the oldest first, at most `limit` in all (default: no bound); 1,000 per
   * call (`CLEAN`). Returns how many were deleted.
   */
  async clean(state: FinishedState, opts: CleanOptions = {}): Promise<number> {
    assertFinishedState(state);
    const { graceMs, limit } = cleanOptions(opts);
    return cleanLanes(this.connection, await this.lanesInUse(), state, graceMs, limit);
  }

  /**
   * Deletes every waiting job — pending and scheduled — of every lane, 1,000 per call
   * (`DRAIN`); running jobs are left to finish. Returns how many were deleted.
   */
  async drain(): Promise<number> {
    return drainLanes(this.connection, await this.lanesInUse());
  }

  /**
   * Deletes the queue: every job, its `meta` (pause flag, settings, lane counts) and its events
   * stream, on every lane, 1,000 jobs per call (`OBLITERATE`). While a job is active it refuses
   * with `QueueActiveError` and writes nothing, unless `force` (running jobs are deleted too:
   * their workers' settlements then fail). Pauses the queue first so no claim starts meanwhile.
   * Its schedules are removed too. Returns how many jobs were deleted.
   */
  /**
   * Releases an idempotency key before its `keyTtlMs`: the next add with it adds a new job. True
   * when the key was held (on a laned queue: by any lane).
   */
  async forgetKey(idemKey: string): Promise<boolean> {
    const released = await Promise.all(
      (await this.lanesInUse()).map((lane) => forgetKey(this.connection, lane, idemKey)),
    );
    return released.includes(true);
  }

  async obliterate(opts: { force?: boolean } = {}): Promise<number> {
    const force = (checkKeys(opts, OBLITERATE_OPTIONS).force ?? false) as boolean;
    const deleted = await obliterateLanes(this.connection, this.name, await this.lanesInUse(), force);
    if (this.lanes === 1) await unscheduleAll(this.connection, this.name); // its schedules go too
    return deleted;
  }

  /**
   * Creates or replaces the schedule `name`: a job (`payload`, `opts`) per instant of `cron` (in
   * `tz`) or of `everyMs`, from `startAt` to `endAt`, `limit` jobs at most; instants missed while
   * no worker ran are skipped or caught up (`missed`). The queue's workers add the jobs, exactly
   * one per instant however many run. Calling it again with the same options changes nothing.
   * Not on a laned queue.
   */
  async schedule(name: string, options: ScheduleOptions): Promise<ScheduleResult> {
    this.unlaned("schedule");
    return schedule(this.connection, this.name, name, options);
  }

  /** Removes the schedule `name` (false: there was none). The jobs it added stay. */
  async unschedule(name: string): Promise<boolean> {
    this.unlaned("unschedule");
    return unschedule(this.connection, this.name, name);
  }

  /**
   * Pauses the schedule `name`: it adds no job until `resumeSchedule`. True when paused now,
   * false when it already was. Throws `ScheduleNotFoundError` when there is no such schedule.
   */
  async pauseSchedule(name: string): Promise<boolean> {
    this.unlaned("pauseSchedule");
    return pauseSchedule(this.connection, this.name, name);
  }

  /**
   * Resumes the paused schedule `name` at its next instant from now: the instants that passed
   * while it was paused add no job (no burst). `next` is null when none is left (it ended).
   * Throws `ScheduleNotFoundError`, or `ScheduleNotPausedError` when it is not paused.
   */
  async resumeSchedule(name: string): Promise<ResumeResult> {
    this.unlaned("resumeSchedule");
    return resumeSchedule(this.connection, this.name, name);
  }

  /** The queue's schedules, the soonest due first (paused ones last): spec, next, count, last fired. */
  async schedules(): Promise<ScheduleInfo[]> {
    return this.lanes === 1 ? listSchedules(this.connection, this.name) : [];
  }

  private unlaned(call: string): void {
    if (this.lanes !== 1) throw new InvalidArgumentError(call, "a laned queue has no schedules");
  }

  /**
   * Every lane the queue's jobs may be in: its own lanes and those of every lane count recorded
   * for it (a laned queue records its count on its first add; a worker drains them all).
   */
  lanesInUse(): Promise<string[]> {
    return this.route.inUse();
  }

  private withDurability(opts: QueueAddOptions): AddOptions {
    const { laneKey: _, ...rest } = (opts ?? {}) as QueueAddOptions;
    const own = "durability" in rest;
    return this.durability && !own ? { ...rest, durability: this.durability } : rest;
  }
}

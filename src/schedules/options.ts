/**
 * What a schedule is: the caller's options checked (typed errors naming the option, before
 * anything is sent), the canonical spec the record keeps (`spec`, JSON), and the job id of an
 * instant.
 */
import { createHash } from "node:crypto";
import { Cron } from "croner";
import { composeId, ID_EPOCH_MS } from "../branded-id.js";
import { InvalidArgumentError } from "../errors.js";
import {
  assertInteger,
  assertOptions,
  assertPayload,
  MAX_INTEGER,
  maxBytes,
  type Payload,
  typeOf,
} from "../jobs/common.js";
import { ADD_FOREIGN, assertLabel, EXTRAS_KEYS } from "../jobs/add-options.js";
import { checkJobBackoff, type JobBackoff } from "../jobs/job-backoff.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import type { CheckedSchedule, MissedPolicy, ScheduleSpec } from "../jobs/schedule-record.js";

export {
  type CheckedSchedule,
  type MissedPolicy,
  type ScheduleSpec,
  specText,
} from "../jobs/schedule-record.js";

/** The options of the jobs a schedule adds. */
export interface ScheduleJobOptions {
  /** Score in `pending`: lower is claimed first. Default 0. */
  priority?: number;
  /** Attempts before a job is dead. Default 0 = the worker decides. */
  maxAttempts?: number;
  /** The job's timeout in ms (its row's `timeout`). Default 0 = none. */
  timeoutMs?: number;
  /** Every job's name, kept on its row (as `AddOptions.name`). Default: none. */
  name?: string;
  /** Every job's own retry backoff, kept on its row (as `AddOptions.backoff`). Default: the worker's. */
  backoff?: JobBackoff;
}

export interface ScheduleOptions {
  /** A cron pattern (5 fields, or 6 with seconds first), read by croner. Either this or `everyMs`. */
  cron?: string;
  /** A fixed period in ms: instants `startAt + k·everyMs` (the epoch when no `startAt`). */
  everyMs?: number;
  /** The IANA time zone the cron pattern is read in. Default `UTC`. Cron only. */
  tz?: string;
  /** Every job's payload. */
  payload: Payload;
  /** Every job's options. */
  opts?: ScheduleJobOptions;
  /** No instant before this time (a `Date` or ms since the epoch). */
  startAt?: Date | number;
  /** No instant after this time; the schedule ends after its last instant. */
  endAt?: Date | number;
  /** Jobs added at most; the schedule ends after the last. */
  limit?: number;
  /** Instants that passed while no worker ran: `skip` (default) or `catch-up`. */
  missed?: MissedPolicy;
  /** Under `skip`, how late an instant may be and still fire (ms). Default 5000. */
  graceMs?: number;
}

export const DEFAULT_GRACE_MS = 5000;
/** The longest schedule name (bytes): the `name` grammar's `max_bytes`. */
const MAX_NAME: number = maxBytes("name");

/** A schedule's name: 1–255 bytes (UTF-8), no control character. */
export function assertScheduleName(name: unknown): string {
  if (typeof name !== "string")
    throw new InvalidArgumentError("name", `must be a string, got ${typeOf(name)}`);
  const bytes = Buffer.byteLength(name);
  if (bytes < 1 || bytes > MAX_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new InvalidArgumentError(
      "name",
      `must be 1 to ${MAX_NAME} bytes, no control characters, got ${JSON.stringify(name.slice(0, 80))}`,
    );
  }
  return name;
}

function instant(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : value;
  return assertInteger(name, ms, 0, MAX_INTEGER, " of ms since the epoch (or a Date)");
}

function timeZone(tz: unknown): string {
  if (typeof tz !== "string")
    throw new InvalidArgumentError("tz", `must be an IANA time zone name, got ${typeOf(tz)}`);
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    throw new InvalidArgumentError("tz", `must be an IANA time zone name, got ${JSON.stringify(tz)}`);
  }
  return tz;
}

const SCHEDULE_OPTIONS: OptionTable = {
  of: "schedule",
  keys: {
    cron: "string",
    everyMs: "number",
    tz: "string",
    payload: ["string", "bytes"],
    opts: "object",
    startAt: ["date", "number"],
    endAt: ["date", "number"],
    limit: "number",
    missed: "string",
    graceMs: "number",
  } satisfies Record<keyof ScheduleOptions, KeyType>,
  foreign: {
    pattern: "cron",
    every: "everyMs",
    startDate: "startAt",
    endDate: "endAt",
    data: "payload",
    utc: 'cron patterns are read in UTC unless tz is given (tz: "UTC")',
    immediately: "the first job is the first instant's: give startAt",
    count: "the schedule counts the jobs it added itself (queue.schedules(): fired)",
    key: "a schedule is named by schedule()'s first argument",
    jobId: "a schedule is named by schedule()'s first argument; its jobs' ids derive from it",
  },
};

const SCHEDULE_JOB_OPTIONS: OptionTable = {
  of: "a schedule's jobs",
  keys: {
    priority: "number",
    maxAttempts: "number",
    timeoutMs: "number",
    name: EXTRAS_KEYS.name,
    backoff: EXTRAS_KEYS.backoff,
  } satisfies Record<keyof ScheduleJobOptions, KeyType>,
  foreign: ADD_FOREIGN,
};

/** A cron pattern checked: 5 or 6 fields (a record stored before this check: any croner reads). */
function cronPattern(cron: unknown, tz: string | undefined, stored: boolean): string {
  if (typeof cron !== "string")
    throw new InvalidArgumentError("cron", `must be a string, got ${typeOf(cron)}`);
  const fields = cron.trim().split(/\s+/).length;
  if (!stored && !cron.trim().startsWith("@") && fields !== 5 && fields !== 6) {
    throw new InvalidArgumentError(
      "cron",
      `${JSON.stringify(cron)} has ${fields} fields: a pattern has 5 (minute hour day-of-month month day-of-week), or 6 with seconds first`,
    );
  }
  let next: Date | null;
  try {
    next = new Cron(cron, { timezone: tz ?? "UTC" }).nextRun();
  } catch (err) {
    throw new InvalidArgumentError(
      "cron",
      `${JSON.stringify(cron)} is not a cron pattern (${(err as Error).message})`,
    );
  }
  if (next === null) {
    throw new InvalidArgumentError("cron", `${JSON.stringify(cron)} never matches: no date fits it`);
  }
  return cron;
}

/**
 * The caller's options checked, or the first wrong one as an `InvalidArgumentError` (`stored`:
 * a record's spec read back, kept readable whatever a later release refuses to create).
 */
export function checkSchedule(options: unknown, stored = false): CheckedSchedule {
  if (options === undefined)
    throw new InvalidArgumentError("schedule options", "must be an object, got undefined");
  const o = checkKeys(options, SCHEDULE_OPTIONS, "schedule options") as Partial<ScheduleOptions> &
    Record<string, unknown>;
  if (o.cron !== undefined && o.everyMs !== undefined) {
    throw new InvalidArgumentError("cron", "give either cron or everyMs, not both");
  }
  if (o.cron === undefined && o.everyMs === undefined) {
    throw new InvalidArgumentError("cron", "give cron (a pattern) or everyMs (a period)");
  }
  const spec: ScheduleSpec = { missed: "skip", graceMs: DEFAULT_GRACE_MS };
  if (o.everyMs !== undefined) {
    spec.everyMs = assertInteger("everyMs", o.everyMs, 1, MAX_INTEGER, " of milliseconds");
    if (o.tz !== undefined) throw new InvalidArgumentError("tz", "applies to cron patterns only");
  } else {
    if (o.tz !== undefined) spec.tz = timeZone(o.tz);
    spec.cron = cronPattern(o.cron, spec.tz, stored);
  }
  const startAt = instant("startAt", o.startAt);
  const endAt = instant("endAt", o.endAt);
  if (startAt !== undefined) spec.startAt = startAt;
  if (endAt !== undefined) spec.endAt = endAt;
  if (startAt !== undefined && endAt !== undefined && endAt < startAt) {
    throw new InvalidArgumentError("endAt", `must not be before startAt (${endAt} < ${startAt})`);
  }
  if (o.limit !== undefined) spec.limit = assertInteger("limit", o.limit, 1, MAX_INTEGER);
  if (o.missed !== undefined) {
    if (o.missed !== "skip" && o.missed !== "catch-up") {
      throw new InvalidArgumentError(
        "missed",
        `must be "skip" or "catch-up", got ${JSON.stringify(o.missed)}`,
      );
    }
    spec.missed = o.missed;
  }
  if (o.graceMs !== undefined)
    spec.graceMs = assertInteger("graceMs", o.graceMs, 0, MAX_INTEGER, " of milliseconds");
  assertPayload(o.payload);
  const job = checkKeys(o.opts, SCHEDULE_JOB_OPTIONS, "opts", "opts.") as ScheduleJobOptions;
  return {
    spec,
    payload: o.payload,
    priority:
      job.priority === undefined
        ? 0
        : assertInteger("opts.priority", job.priority, -MAX_INTEGER, MAX_INTEGER),
    maxAttempts:
      job.maxAttempts === undefined ? 0 : assertInteger("opts.maxAttempts", job.maxAttempts, 0, MAX_INTEGER),
    timeoutMs:
      job.timeoutMs === undefined
        ? 0
        : assertInteger("opts.timeoutMs", job.timeoutMs, 0, MAX_INTEGER, " of milliseconds"),
    jobName: job.name === undefined ? "" : assertLabel("opts.name", job.name),
    backoff: checkJobBackoff("opts.backoff", job.backoff),
  };
}

/** A record's `spec` read back (a spec this host cannot read is an `InvalidArgumentError`). */
export function parseSpec(text: string): ScheduleSpec {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError("spec", `is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
  const o = assertOptions(raw, "spec") as Record<string, unknown>;
  const { spec } = checkSchedule({ ...o, payload: "" }, true);
  return spec;
}

/**
 * The job id of a schedule's instant: `JOB`, 7 Base62 characters of the instant (ms since
 * 2024-01-01, as every branded id), 4 of a SHA-256 of queue, NUL and name. Every process derives
 * the same id for one instant, so a second add of it is a duplicate; ids sort by instant.
 */
export function instantId(queue: string, name: string, instant: number): string {
  const digest = createHash("sha256").update(queue).update("\0").update(name).digest();
  return composeId("JOB", Math.max(instant - ID_EPOCH_MS, 0), digest.readUInt32BE(0));
}

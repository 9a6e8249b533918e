/**
 * The producer's side of schedules, behind `Queue.schedule`, `Queue.unschedule`,
 * `Queue.pauseSchedule`, `Queue.resumeSchedule` and `Queue.schedules`: options checked before
 * anything is sent, the first instant computed from the server's clock, the record written by
 * `SCHEDULE` (`PAUSESCHEDULE`, `RESUMESCHEDULE`).
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError, ScheduleNotFoundError, ScheduleNotPausedError } from "../errors.js";
import {
  pauseRecord,
  readRecord,
  resumeRecord,
  type ScheduleOutcome,
  scheduleRecord,
  soonest,
  unscheduleRecord,
} from "../jobs/repeat.js";
import { type JobBackoff, jobBackoffOf } from "../jobs/job-backoff.js";
import { queueKey } from "../keyspace.js";
import { Instants } from "./instants.js";
import { assertScheduleName, checkSchedule, parseSpec, type ScheduleSpec } from "./options.js";

export interface ScheduleResult {
  name: string;
  /** `created`, `replaced` (the next instant recomputed, the count kept) or `unchanged`. */
  outcome: ScheduleOutcome;
  /** The next due instant (ms since the epoch). */
  next: number;
}

export interface ScheduleInfo {
  name: string;
  /** The next due instant (ms since the epoch). */
  next: number;
  /** Jobs the schedule has added so far. */
  fired: number;
  /** The instant of the last job it added (ms since the epoch), null before the first. */
  lastFired: number | null;
  /** Held by `pauseSchedule`: it adds no job until `resumeSchedule` (its `next` is then recomputed). */
  paused: boolean;
  spec: ScheduleSpec;
  payload: Buffer;
  /** What its jobs carry; `name` and `backoff` only when the schedule gives them. */
  opts: { priority: number; maxAttempts: number; timeoutMs: number; name?: string; backoff?: JobBackoff };
}

/** The server's clock in ms (on a cluster, the clock of the node that holds the queue). */
export async function serverTime(conn: Connection, queue: string): Promise<number> {
  const [seconds, micros] = (await conn.send("TIME", [], queueKey(queue, ""))) as Buffer[];
  return Number(String(seconds)) * 1000 + Math.floor(Number(String(micros)) / 1000);
}

/** Creates or replaces the schedule `name` of `queue`. */
export async function schedule(
  conn: Connection,
  queue: string,
  name: unknown,
  options: unknown,
): Promise<ScheduleResult> {
  const label = assertScheduleName(name);
  const checked = checkSchedule(options);
  const now = await serverTime(conn, queue);
  const next = new Instants(checked.spec).atOrAfter(now);
  if (next === null && checked.spec.endAt !== undefined) {
    throw new InvalidArgumentError("endAt", `leaves no instant after now (${now})`);
  }
  if (next === null) throw new InvalidArgumentError("cron", "never matches after now: no date fits it");
  const outcome = await scheduleRecord(conn, queue, label, checked, next);
  if (outcome !== "unchanged") return { name: label, outcome, next };
  const stored = await readRecord(conn, queue, label);
  return { name: label, outcome, next: stored?.next ?? next };
}

/** Removes the schedule `name`; false when there was none. Jobs it added stay. */
export function unschedule(conn: Connection, queue: string, name: unknown): Promise<boolean> {
  return unscheduleRecord(conn, queue, assertScheduleName(name));
}

/**
 * Pauses the schedule `name`: it adds no job until resumed. True when paused now, false when it
 * already was (nothing written). Throws `ScheduleNotFoundError` when there is no such schedule.
 */
export async function pauseSchedule(conn: Connection, queue: string, name: unknown): Promise<boolean> {
  const label = assertScheduleName(name);
  const outcome = await pauseRecord(conn, queue, label);
  if (outcome === "missing") throw new ScheduleNotFoundError(queue, label);
  return outcome === "paused";
}

/** What `resumeSchedule` did: the next instant from now, or null when the schedule ended. */
export interface ResumeResult {
  name: string;
  /** The first instant at or after now (ms since the epoch); null: none left, the schedule ended. */
  next: number | null;
}

/**
 * Resumes the paused schedule `name` at its first instant at or after now (the server's clock):
 * the instants that passed while it was paused add no job, whatever its `missed` policy. A
 * schedule with no instant left (its `endAt` passed meanwhile) ends. Throws
 * `ScheduleNotFoundError` (no such schedule) or `ScheduleNotPausedError` (it runs).
 */
export async function resumeSchedule(conn: Connection, queue: string, name: unknown): Promise<ResumeResult> {
  const label = assertScheduleName(name);
  const record = await readRecord(conn, queue, label);
  if (record === null) throw new ScheduleNotFoundError(queue, label);
  if (!record.paused) throw new ScheduleNotPausedError(queue, label);
  const next = new Instants(parseSpec(record.spec)).atOrAfter(await serverTime(conn, queue));
  const outcome = await resumeRecord(conn, queue, label, next ?? 0);
  if (outcome === "missing") throw new ScheduleNotFoundError(queue, label);
  if (outcome === "not-paused") throw new ScheduleNotPausedError(queue, label);
  return { name: label, next: outcome === "ended" ? null : next };
}

/** Removes every schedule of `queue` (`UNSCHEDULE` each); returns how many. */
export async function unscheduleAll(conn: Connection, queue: string): Promise<number> {
  let removed = 0;
  for (const [name] of await soonest(conn, queue, 0)) {
    if (await unscheduleRecord(conn, queue, name)) removed++;
  }
  return removed;
}

/** Every schedule of `queue`, the soonest first. */
export async function listSchedules(conn: Connection, queue: string): Promise<ScheduleInfo[]> {
  const out: ScheduleInfo[] = [];
  for (const [name] of await soonest(conn, queue, 0)) {
    const record = await readRecord(conn, queue, name);
    if (record === null) continue;
    out.push({
      name,
      next: record.next,
      fired: record.fired,
      lastFired: record.lastFired || null,
      paused: record.paused,
      spec: parseSpec(record.spec),
      payload: record.payload,
      opts: jobOpts(record),
    });
  }
  return out;
}

/** What a record's jobs carry, as `ScheduleInfo.opts` shows it. */
function jobOpts(record: NonNullable<Awaited<ReturnType<typeof readRecord>>>): ScheduleInfo["opts"] {
  const opts: ScheduleInfo["opts"] = {
    priority: record.priority,
    maxAttempts: record.maxAttempts,
    timeoutMs: record.timeoutMs,
  };
  if (record.jobName !== "") opts.name = record.jobName;
  const backoff = jobBackoffOf(record.backoff);
  if (backoff !== undefined) opts.backoff = backoff;
  return opts;
}

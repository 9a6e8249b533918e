/**
 * Host steps of the schedule verbs: `SCHEDULE` (create or replace a schedule's record),
 * `UNSCHEDULE` (remove it), `FIRE` (the job of one instant, compare-and-set on the record's next
 * instant), `PAUSESCHEDULE` / `RESUMESCHEDULE` (hold it, re-arm it), and the reads of records the
 * schedule loop and `Queue.schedules()` make.
 */
import type { Connection } from "../connector/connection.js";
import { assertValidQueue, keyOf } from "../keyspace.js";
import { key, text, toArg } from "./common.js";
import { call } from "./calls.js";
import { type CheckedSchedule, specText } from "./schedule-record.js";

/** What `SCHEDULE` did: `created`, `replaced` (next instant reset, count kept), `unchanged`. */
export type ScheduleOutcome = "created" | "replaced" | "unchanged";

/** What `FIRE` did (docs/protocol.md, `FIRE`). */
type FireOutcome = "miss" | "added" | "added-ended" | "skipped" | "ended";
const FIRE_OUTCOMES: readonly FireOutcome[] = ["miss", "added", "added-ended", "skipped", "ended"];

/** A schedule's record: `emq:{q}:repeat:<name>`. */
function recordKey(queue: string, name: string): string {
  return keyOf(queue, "repeat", name);
}

/** Creates or replaces the schedule `name` whose first instant is `next`. */
export async function scheduleRecord(
  conn: Connection,
  queue: string,
  name: string,
  s: CheckedSchedule,
  next: number,
): Promise<ScheduleOutcome> {
  assertValidQueue(queue);
  const values = [
    name,
    specText(s.spec),
    String(next),
    String(s.spec.limit ?? 0),
    String(s.spec.endAt ?? 0),
    toArg(s.payload),
    String(s.priority),
    String(s.maxAttempts),
    String(s.timeoutMs),
    s.jobName,
    s.backoff,
  ];
  const reply = Number(await call(conn, "SCHEDULE", queue, values));
  return reply === 1 ? "created" : reply === 2 ? "replaced" : "unchanged";
}

/** Removes the schedule `name`; false when there was none. */
export async function unscheduleRecord(conn: Connection, queue: string, name: string): Promise<boolean> {
  assertValidQueue(queue);
  return Number(await call(conn, "UNSCHEDULE", queue, [name])) === 1;
}

/** What `PAUSESCHEDULE` did. */
type PauseOutcome = "missing" | "paused" | "already";
/** What `RESUMESCHEDULE` did: `ended` when `next` was 0 or after the schedule's end. */
type ResumeOutcome = "missing" | "resumed" | "not-paused" | "ended";

/** `PAUSESCHEDULE`: holds the schedule `name`. */
export async function pauseRecord(conn: Connection, queue: string, name: string): Promise<PauseOutcome> {
  assertValidQueue(queue);
  const reply = Number(await call(conn, "PAUSESCHEDULE", queue, [name]));
  return (["missing", "paused", "already"] as const)[reply] ?? "missing";
}

/** `RESUMESCHEDULE`: re-arms the paused schedule `name` at `next` (0: it ends). */
export async function resumeRecord(
  conn: Connection,
  queue: string,
  name: string,
  next: number,
): Promise<ResumeOutcome> {
  assertValidQueue(queue);
  const reply = Number(await call(conn, "RESUMESCHEDULE", queue, [name, String(next)]));
  return (["missing", "resumed", "not-paused", "ended"] as const)[reply] ?? "missing";
}

/** `FIRE`: the job `id` of `instant` when the record's next instant is `expected`; then `next`. */
export async function fireInstant(
  conn: Connection,
  queue: string,
  name: string,
  id: string,
  at: { expected: number; instant: number; next: number },
): Promise<FireOutcome> {
  const values = [id, name, String(at.expected), String(at.instant), String(at.next)];
  return FIRE_OUTCOMES[Number(await call(conn, "FIRE", queue, values, id))] ?? "miss";
}

/** A schedule's record as stored. */
interface ScheduleRecord {
  spec: string;
  next: number;
  fired: number;
  payload: Buffer;
  priority: number;
  maxAttempts: number;
  timeoutMs: number;
  /** The jobs' row `name` (`""`: none, or a record written before schedules kept one). */
  jobName: string;
  /** The jobs' own backoff as the row keeps it (`""`: none). */
  backoff: string;
  /** The instant of the last job it added (0: none yet). */
  lastFired: number;
  paused: boolean;
}

const FIELDS = [
  ...["spec", "next", "fired", "payload", "priority", "max_attempts", "timeout"],
  ...["last_fired", "paused", "job_name", "backoff"],
] as const;

/** The record of `name`, or null when there is none. */
export async function readRecord(
  conn: Connection,
  queue: string,
  name: string,
): Promise<ScheduleRecord | null> {
  const got = (await conn.send("HMGET", [recordKey(queue, name), ...FIELDS])) as (Buffer | null)[];
  if (got[0] === null || got[0] === undefined || got[1] === null || got[1] === undefined) return null;
  const num = (b: Buffer | null | undefined) => Number(b ? text(b) : 0) || 0;
  return {
    spec: got[0].toString("utf8"),
    next: num(got[1]),
    fired: num(got[2]),
    payload: got[3] ?? Buffer.alloc(0),
    priority: num(got[4]),
    maxAttempts: num(got[5]),
    timeoutMs: num(got[6]),
    lastFired: num(got[7]),
    paused: got[8] !== null && got[8] !== undefined && text(got[8]) === "1",
    jobName: got[9] ? got[9].toString("utf8") : "",
    backoff: got[10] ? got[10].toString("utf8") : "",
  };
}

/** The first `count` names of `repeats` with their next instants, the soonest first. */
export async function soonest(conn: Connection, queue: string, count: number): Promise<[string, number][]> {
  const reply = (await conn.send("ZRANGE", [key(queue, "repeats"), 0, count - 1, "WITHSCORES"])) as Buffer[];
  const out: [string, number][] = [];
  for (let i = 0; i + 1 < reply.length; i += 2)
    out.push([reply[i]!.toString("utf8"), Number(text(reply[i + 1]))]);
  return out;
}

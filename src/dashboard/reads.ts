/**
 * The dashboard's reads of one queue: a page of a state's jobs with a total that agrees with it,
 * a job found by its idempotency key, jobs found by a payload substring (a bounded scan), and a
 * job's detail — its row, its timeline and the times drawn from both.
 */
import { idTime } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { assertLabel } from "../jobs/add-options.js";
import { text } from "../jobs/common.js";
import { queueKey } from "../keyspace.js";
import { LISTING } from "../operate/paging.js";
import type { JobInfo, JobState, Queue } from "../queue.js";
import { HttpError } from "./http.js";
import { jobView, type TimelineEntry, timeline } from "./views.js";

/** Jobs a payload search reads at most (one state, newest or next first). */
const SEARCH_SCAN = 1000;
/** Matches a payload search returns at most. */
const SEARCH_MATCHES = 50;

/**
 * One page of `state`'s jobs and the state's total, agreeing with each other: the page is read
 * one job longer than asked; when it ends before that, the set ended there when it was read, and
 * the total is what it held then (a count read after it could already hold a job that entered
 * the state since: "1–8 of 9"). A full page takes the count, never less than the jobs seen.
 */
export async function jobsPage(
  queue: Queue,
  state: JobState,
  offset: number,
  limit: number,
): Promise<{ total: number; jobs: Record<string, unknown>[] }> {
  const page = await queue.getJobs(state, { offset, limit: limit + 1 });
  if (page.length <= limit && (page.length > 0 || offset === 0))
    return { total: offset + page.length, jobs: page.map(jobView) };
  const counts = await queue.counts();
  const seen = page.length > 0 ? offset + page.length : 0;
  return { total: Math.max(counts[state], seen), jobs: page.slice(0, limit).map(jobView) };
}

/** The id of the job added with idempotency key `idemKey` while the key is held, or null. */
export async function findByKey(conn: Connection, queue: Queue, idemKey: string): Promise<string | null> {
  try {
    assertLabel("key", idemKey);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  for (const lane of await queue.lanesInUse()) {
    const id = await conn.send("GET", [queueKey(lane, `key:${idemKey}`)]);
    if (id !== null && id !== undefined) return text(id as Buffer);
  }
  return null;
}

/**
 * The jobs of `state` whose payload holds `needle` (UTF-8 bytes), among the first `SEARCH_SCAN`
 * of the state's order: `complete` false when the state holds more than were read.
 */
export async function searchPayload(
  queue: Queue,
  state: JobState,
  needle: string,
): Promise<{ jobs: Record<string, unknown>[]; scanned: number; complete: boolean }> {
  if (needle === "") throw new HttpError(400, "text must not be empty: give the bytes to look for");
  const want = Buffer.from(needle, "utf8");
  const read = await queue.getJobs(state, { offset: 0, limit: SEARCH_SCAN });
  const found = read.filter((j) => j.payload.includes(want)).slice(0, SEARCH_MATCHES);
  const complete = read.length < SEARCH_SCAN || (await queue.counts())[state] <= SEARCH_SCAN;
  return { jobs: found.map(jobView), scanned: read.length, complete };
}

/** When a job started, finished and waited, from its timeline and its score in its state's set. */
interface JobTimes {
  createdAt: number;
  /** The latest claim: the row's `processed_on`, else the latest `active` on the bus. */
  startedAt?: number;
  /** Its completion, or its death. */
  finishedAt?: number;
  /** From creation to the first claim. */
  waitMs?: number;
  /** From the latest claim to the finish (or to now, while active). */
  runMs?: number;
  /** An active job: its lease's deadline, and the lease token (its attempt) the holder claimed with. */
  lease?: { deadline: number; token: number; since?: number };
}

function jobTimes(job: JobInfo, events: readonly TimelineEntry[], score: number | null, now: number) {
  const createdAt = idTime(job.id);
  const claims = events.filter((e) => e.kind === "active");
  const first = claims[0]?.at;
  // The row's processed_on outlives the bus (a trimmed stream keeps no `active` entry).
  const startedAt = job.processedOn ?? claims.at(-1)?.at;
  const end = events.findLast((e) => e.kind === "completed" || e.kind === "dead")?.at;
  const finished = job.state === "completed" || job.state === "dead";
  const finishedAt = finished ? (score ?? end) : undefined;
  const times: JobTimes = { createdAt };
  if (startedAt !== undefined) times.startedAt = startedAt;
  if (finishedAt !== undefined) times.finishedAt = finishedAt;
  if (first !== undefined) times.waitMs = first - createdAt;
  if (startedAt !== undefined && (finishedAt !== undefined || job.state === "active")) {
    times.runMs = Math.max(0, (finishedAt ?? now) - startedAt);
  }
  if (job.state === "active" && score !== null) {
    times.lease = {
      deadline: score,
      token: job.attempts,
      ...(startedAt !== undefined ? { since: startedAt } : {}),
    };
  }
  return times;
}

/** A job's detail: its row, its timeline, its times; null when there is no such job. */
export async function jobDetail(conn: Connection, queue: Queue, id: string) {
  const job = await queue.getJob(id);
  if (job === null) return null;
  const set = LISTING[job.state]?.set;
  const [events, rawScore] = await Promise.all([
    timeline(conn, job.lane, id),
    set === undefined ? null : conn.send("ZSCORE", [queueKey(job.lane, set), id]),
  ]);
  const score = rawScore === null || rawScore === undefined ? null : Number(text(rawScore as Buffer));
  const extra: Record<string, unknown> = {};
  if (job.group !== undefined) extra.group = job.group;
  if (job.timeoutMs !== undefined) extra.timeoutMs = job.timeoutMs;
  if (job.parent !== undefined) extra.parent = job.parent;
  if (job.childrenLeft !== undefined) extra.childrenLeft = job.childrenLeft;
  if (job.trace !== undefined) extra.trace = job.trace;
  return {
    ...jobView(job),
    ...extra,
    timeline: events,
    times: jobTimes(job, events, score, Date.now()),
  };
}

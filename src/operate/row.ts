/**
 * A job row as the operator API returns it: the hash `emq:{q}:job:<id>` (docs/protocol.md, "The
 * job row") read into a typed object. Pure.
 */
import { type JobBackoff, jobBackoffOf } from "../jobs/job-backoff.js";

/** A job's state; `waiting`: a flow's parent whose children have not all settled. */
export type JobState = "pending" | "scheduled" | "active" | "completed" | "dead" | "waiting";

/** A job row as stored (see docs/protocol.md). */
export interface JobInfo {
  id: string;
  /** The physical queue the row is in: the queue itself, or one of its lanes. */
  lane: string;
  state: JobState;
  attempts: number;
  payload: Buffer;
  priority: number;
  maxAttempts?: number;
  result?: Buffer;
  error?: string;
  /** The latest value `job.progress()` recorded (bytes: text or JSON as the handler gave it). */
  progress?: Buffer;
  /** The job's log, oldest first: the last 100 lines `job.log()` appended, over every attempt. */
  logs: string[];
  /** The trace context of the job's creation (`AddOptions.trace`), when it carries one. */
  trace?: string;
  /** The job's group (`AddOptions.group`), when it has one. */
  group?: string;
  /** The handler's time limit in ms (`AddOptions.timeoutMs`), when it has one. */
  timeoutMs?: number;
  /** The flow parent this job is a child of, when it is one. */
  parent?: { queue: string; id: string };
  /** A flow's parent: how many of its children have not settled yet. */
  childrenLeft?: number;
  /** The job's name (`AddOptions.name`), when it has one. */
  name?: string;
  /** The job's own retry backoff (`AddOptions.backoff`), when it has one. */
  backoff?: JobBackoff;
  /**
   * Attempts that have ended (completed, failed, expired or handed back): `attempts`, less the
   * one running while the job is active.
   */
  attemptsMade: number;
  /**
   * When the current or last attempt's lease was granted (server ms, the row's `processed_on`):
   * kept after the job leaves `active` (completed, failed, requeued) until the next lease; absent
   * for a job never leased.
   */
  processedOn?: number;
  /** When the job finished (server ms): completed or dead, its score in `done` / `dead`. */
  finishedOn?: number;
  /**
   * The stack of the latest failure, beside `error`, when it had one (a worker keeps the first
   * 20 frames, at most 8 KiB).
   */
  stack?: string;
}

/**
 * A row's fields (`HGETALL` as field → bytes) as a `JobInfo`; `null` for an empty row.
 * `finishedAt`: the job's score in `done` or `dead` (its finish time), when read.
 */
export function jobInfo(
  id: string,
  lane: string,
  reply: Record<string, Buffer>,
  finishedAt?: number | null,
): JobInfo | null {
  const row = new Map<string, Buffer>(Object.entries(reply));
  if (row.size === 0) return null;
  const text = (field: string) => row.get(field)?.toString();
  const info: JobInfo = {
    id,
    lane,
    state: text("state") as JobState,
    attempts: Number(text("attempts") ?? 0),
    payload: row.get("payload") ?? Buffer.alloc(0),
    priority: Number(text("priority") ?? 0),
    logs: logLines(row),
    attemptsMade: 0,
  };
  info.attemptsMade = info.state === "active" ? Math.max(info.attempts - 1, 0) : info.attempts;
  const finished = info.state === "completed" || info.state === "dead";
  if (finished && finishedAt != null && Number.isFinite(finishedAt)) info.finishedOn = finishedAt;
  if (row.has("processed_on")) {
    const processedOn = Number(text("processed_on"));
    if (Number.isFinite(processedOn)) info.processedOn = processedOn;
  }
  if (row.has("max_attempts")) info.maxAttempts = Number(text("max_attempts"));
  if (row.has("result")) info.result = row.get("result")!;
  if (row.has("error")) info.error = text("error")!;
  if (row.has("stack")) info.stack = text("stack")!;
  if (row.has("progress")) info.progress = row.get("progress")!;
  if (row.has("trace")) info.trace = text("trace")!;
  if (row.has("group")) info.group = text("group")!;
  if (row.has("timeout")) info.timeoutMs = Number(text("timeout"));
  if (row.has("name")) info.name = text("name")!;
  const backoff = jobBackoffOf(text("backoff"));
  if (backoff !== undefined) info.backoff = backoff;
  if (row.has("children")) info.childrenLeft = Number(text("children"));
  const parent = text("parent");
  if (parent !== undefined) {
    const at = parent.indexOf("\u0000");
    info.parent = { queue: parent.slice(0, at), id: parent.slice(at + 1) };
  }
  return info;
}

/** A row's log lines (`log:<n>` fields), oldest first. */
function logLines(row: ReadonlyMap<string, Buffer>): string[] {
  const lines: [number, string][] = [];
  for (const [field, value] of row) {
    const n = /^log:([1-9][0-9]*)$/.exec(field)?.[1];
    if (n !== undefined) lines.push([Number(n), value.toString("utf8")]);
  }
  return lines.sort((a, b) => a[0] - b[0]).map(([, line]) => line);
}

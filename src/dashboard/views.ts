/**
 * What the dashboard shows of a job: its row as JSON-safe values (bytes as UTF-8 text when they
 * are, else base64) and its timeline, read from the queue's event bus — the entries naming the
 * job, from its admission time on (its id carries it), at most `TIMELINE_SCAN` entries read.
 */
import { idTime } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { parseEntries } from "../events/entry.js";
import { text } from "../jobs/common.js";
import { queueKey } from "../keyspace.js";
import type { JobInfo } from "../queue.js";

/** Bus entries read for one job's timeline, at most. */
const TIMELINE_SCAN = 5_000;

export interface Bytes {
  text?: string;
  base64?: string;
  bytes: number;
}

export interface TimelineEntry {
  at: number;
  kind: string;
  attempt?: number;
  reason?: string;
  delay?: number;
}

/** Bytes as text when they are valid UTF-8 without control characters (tabs and newlines allowed). */
export function bytesView(buf: Buffer): Bytes {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(buf);
  const clean =
    Buffer.from(text, "utf8").equals(buf) && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(text);
  return clean ? { text, bytes: buf.length } : { base64: buf.toString("base64"), bytes: buf.length };
}

export function jobView(job: JobInfo): Record<string, unknown> {
  return {
    id: job.id,
    lane: job.lane,
    state: job.state,
    name: job.name,
    backoff: job.backoff,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    priority: job.priority,
    createdAt: idTime(job.id),
    payload: bytesView(job.payload),
    result: job.result === undefined ? undefined : bytesView(job.result),
    error: job.error,
    progress: job.progress === undefined ? undefined : bytesView(job.progress),
    logs: job.logs,
  };
}

/** The bus events naming job `id` in physical queue `lane` (its `active` in a `completed` entry's `next` too), oldest first. */
export async function timeline(conn: Connection, lane: string, id: string): Promise<TimelineEntry[]> {
  const key = queueKey(lane, "events");
  const raw = (await conn.send("XRANGE", [key, String(idTime(id)), "+", "COUNT", TIMELINE_SCAN], key)) as [
    Buffer | string,
    (Buffer | string)[],
  ][];
  const out: TimelineEntry[] = [];
  for (const [rawId, fields] of raw) {
    const eventId = text(rawId);
    const events = parseEntries(
      eventId,
      fields.map((f) => (Buffer.isBuffer(f) ? f : Buffer.from(f, "latin1"))),
    );
    for (const event of events) {
      if (event.jobId !== id) continue;
      const entry: TimelineEntry = { at: Number(eventId.split("-")[0]), kind: event.kind };
      if (event.attempt !== undefined) entry.attempt = event.attempt;
      if (event.reason !== undefined) entry.reason = event.reason;
      if (event.delay !== undefined) entry.delay = event.delay;
      out.push(entry);
    }
  }
  return out;
}

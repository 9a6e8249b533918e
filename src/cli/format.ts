/**
 * Rendering for people and for machines: aligned tables, a job as JSON, bytes as text when they
 * are UTF-8 (else base64), server times as ISO dates. Pure.
 */
import type { BusEvent } from "../events/entry.js";
import type { JobInfo } from "../operate/row.js";

/** A table: a header row and aligned columns (numbers right-aligned). Empty → `(none)`. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  if (rows.length === 0) return "(none)";
  const cells = [header, ...rows.map((r) => r.map((c) => String(c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const numeric = header.map((_, i) => rows.every((r) => typeof r[i] === "number"));
  return cells
    .map((r) =>
      r
        .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** Bytes as text when they are valid UTF-8; else `{ base64 }`. */
export function bytesJson(bytes: Buffer): string | { base64: string } {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : { base64: bytes.toString("base64") };
}

/** A short one-line preview of bytes (at most `max` characters). */
export function preview(bytes: Buffer | string | undefined, max = 40): string {
  if (bytes === undefined) return "";
  const json = typeof bytes === "string" ? bytes : bytesJson(bytes);
  const text = typeof json === "string" ? json : `<${(bytes as Buffer).length} bytes>`;
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A server time in ms as an ISO date (UTC). */
export function isoTime(ms: number): string {
  return Number.isFinite(ms) && ms > 0 && ms < 8.64e15 ? new Date(ms).toISOString() : String(ms);
}

/** A job as JSON: bytes as text (or base64), optional fields only when present. */
export function jobJson(job: JobInfo & { score?: number }): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: job.id,
    lane: job.lane,
    state: job.state,
    attempts: job.attempts,
    priority: job.priority,
    payload: bytesJson(job.payload),
  };
  if (job.name !== undefined) out.name = job.name;
  if (job.backoff !== undefined) out.backoff = job.backoff;
  if (job.maxAttempts !== undefined) out.maxAttempts = job.maxAttempts;
  if (job.processedOn !== undefined) out.processedOn = job.processedOn;
  if (job.finishedOn !== undefined) out.finishedOn = job.finishedOn;
  if (job.result !== undefined) out.result = bytesJson(job.result);
  if (job.error !== undefined) out.error = job.error;
  if (job.stack !== undefined) out.stack = job.stack;
  if (job.progress !== undefined) out.progress = bytesJson(job.progress);
  out.logs = job.logs;
  if (job.score !== undefined) out.score = job.score;
  return out;
}

/** What a listed job's score means in its state (the column title). */
const SCORE_TITLE: Record<string, string> = {
  pending: "priority",
  scheduled: "due",
  active: "lease until",
  completed: "finished",
  dead: "died",
};

/** The human table of a page of jobs in `state`. */
export function jobsTable(state: string, jobs: readonly (JobInfo & { score: number })[]): string {
  const when = (s: number) => (state === "pending" ? s : isoTime(s));
  return table(
    ["id", "attempts", SCORE_TITLE[state] ?? "score", "payload", "error"],
    jobs.map((j) => [j.id, j.attempts, when(j.score), preview(j.payload), preview(j.error)]),
  );
}

/** One job, field by field. */
export function jobText(job: JobInfo): string {
  const lines: [string, string][] = [
    ["id", job.id],
    ["queue", job.lane],
    ["state", job.state],
    ...(job.name !== undefined ? [["name", job.name] as [string, string]] : []),
    ["attempts", String(job.attempts) + (job.maxAttempts !== undefined ? ` of ${job.maxAttempts}` : "")],
    ["priority", String(job.priority)],
    ...(job.processedOn !== undefined ? [["started", isoTime(job.processedOn)] as [string, string]] : []),
    ...(job.finishedOn !== undefined ? [["finished", isoTime(job.finishedOn)] as [string, string]] : []),
    ["payload", preview(job.payload, 200)],
  ];
  if (job.result !== undefined) lines.push(["result", preview(job.result, 200)]);
  if (job.error !== undefined) lines.push(["error", job.error]);
  if (job.stack !== undefined) lines.push(["stack", job.stack]);
  if (job.progress !== undefined) lines.push(["progress", preview(job.progress, 200)]);
  const width = Math.max(...lines.map(([k]) => k.length));
  const text = lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  if (job.logs.length > 0) text.push("logs", ...job.logs.map((l) => `  ${l}`));
  return text.join("\n");
}

/** A bus event as JSON (bytes as text). */
export function eventJson(queue: string, e: BusEvent): Record<string, unknown> {
  const { data, ...rest } = e;
  return { queue, ...rest, ...(data !== undefined ? { data: bytesJson(data) } : {}) };
}

/** A bus event as one line: time, kind, job and attempt, then its extra field. */
export function eventLine(e: BusEvent): string {
  const ms = Number(e.eventId.split("-")[0]);
  const parts = [isoTime(ms), e.kind.padEnd(9)];
  if (e.jobId !== undefined) parts.push(e.jobId, `attempt ${e.attempt ?? 0}`);
  if (e.reason !== undefined) parts.push(`reason ${JSON.stringify(e.reason)}`);
  if (e.delay !== undefined) parts.push(`delay ${e.delay} ms`);
  if (e.data !== undefined) parts.push(`data ${preview(e.data)}`);
  if (e.state !== undefined) parts.push(`state ${e.state}`);
  if (e.count !== undefined) parts.push(`count ${e.count}`);
  return parts.join("  ");
}

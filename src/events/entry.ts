/**
 * The entries of a queue's event bus (`emq:{q}:events`, docs/protocol.md "The event bus") as
 * typed events. An entry is `event <kind>`, then for a job `id <id> attempt <n>`, then at most
 * one of `reason` (failed, dead: the error's first 200 bytes), `delay` (delayed, retrying: ms) or
 * `data` (progress: the value, when at most 200 bytes); `completed` carries `result` (when at
 * most 1 KiB) and, written by a completion that leased the slot's next job in the same call,
 * `next <id> next_attempt <n>`: that job's `active` event, in the same entry. The operator's bulk
 * verbs write one entry per call, without a job: `cleaned` (`state`, `count`) and `drained`
 * (`count`). A flow's parent writes `waiting` when it is added and `ready` when its last child
 * has settled.
 */

/** Every kind an entry names, in a job's usual order. */
export const EVENT_KINDS = [
  "added",
  "delayed",
  "promoted",
  "active",
  "progress",
  "completed",
  "failed",
  "retrying",
  "dead",
  "stalled",
  "requeued",
  "removed",
  "paused",
  "resumed",
  "cleaned",
  "drained",
  "waiting",
  "ready",
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

/** One entry of the bus, typed. */
export interface BusEvent {
  /** The entry's id in the stream (`<ms>-<seq>`, server time): resume from it with `lastEventId`. */
  eventId: string;
  kind: EventKind;
  /** The job (absent for the queue's own entries: `paused`, `resumed`, `cleaned`, `drained`). */
  jobId?: string;
  /** The job's attempt count at the event: 0 before its first claim, the lease token after. */
  attempt?: number;
  /** `failed`, `dead`: the error's first 200 bytes (`lease expired` for a reaped job). */
  reason?: string;
  /** `delayed`, `retrying`: ms until the job is due again. */
  delay?: number;
  /** `progress`: the value as recorded, when it is at most 200 bytes (else read it with getJob). */
  data?: Buffer;
  /** `completed`: the job's result as stored, when it is at most 1 KiB (else read it with getJob). */
  result?: Buffer;
  /** `cleaned`, `drained`: how many jobs the call deleted. */
  count?: number;
  /** `cleaned`: the finished state it deleted from (`completed` or `dead`). */
  state?: string;
}

const KINDS: ReadonlySet<string> = new Set(EVENT_KINDS);

/**
 * An entry as read (`XREAD`, bytes kept) → its events, in order: one, or two for a `completed`
 * entry with `next` (the completion, then the next job's `active`, both with the entry's id);
 * none for an entry no transition writes (an unknown kind: a newer server's, or someone else's
 * `XADD`).
 */
export function parseEntries(eventId: string, fields: readonly Buffer[]): BusEvent[] {
  const get = fieldsOf(fields);
  const event = eventOf(eventId, get);
  if (event === null) return [];
  const next = get.get("next");
  if (event.kind !== "completed" || next === undefined) return [event];
  const active: BusEvent = { eventId, kind: "active", jobId: next.toString("latin1") };
  const attempt = get.get("next_attempt");
  if (attempt !== undefined) active.attempt = Number(attempt.toString("latin1"));
  return [event, active];
}

/** An entry's event (its first, for a `completed` entry with `next`: see parseEntries); `null` as there. */
export function parseEntry(eventId: string, fields: readonly Buffer[]): BusEvent | null {
  return eventOf(eventId, fieldsOf(fields));
}

function fieldsOf(fields: readonly Buffer[]): Map<string, Buffer> {
  const get = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) get.set(fields[i]!.toString("latin1"), fields[i + 1]!);
  return get;
}

function eventOf(eventId: string, get: Map<string, Buffer>): BusEvent | null {
  const kind = get.get("event")?.toString("latin1");
  if (kind === undefined || !KINDS.has(kind)) return null;
  const event: BusEvent = { eventId, kind: kind as EventKind };
  const id = get.get("id");
  if (id !== undefined) event.jobId = id.toString("latin1");
  const attempt = get.get("attempt");
  if (attempt !== undefined) event.attempt = Number(attempt.toString("latin1"));
  const reason = get.get("reason");
  if (reason !== undefined) event.reason = reason.toString("utf8");
  const delay = get.get("delay");
  if (delay !== undefined) event.delay = Number(delay.toString("latin1"));
  const data = get.get("data");
  if (data !== undefined) event.data = data;
  const result = get.get("result");
  if (result !== undefined && kind === "completed") event.result = result;
  const count = get.get("count");
  if (count !== undefined) event.count = Number(count.toString("latin1"));
  const state = get.get("state");
  if (state !== undefined) event.state = state.toString("latin1");
  return event;
}

/** Orders two stream ids (`<ms>-<seq>`, or `<ms>` for `<ms>-0`): negative, zero or positive. */
export function compareIds(a: string, b: string): number {
  const [am, as = "0"] = a.split("-");
  const [bm, bs = "0"] = b.split("-");
  const ms = BigInt(am!) - BigInt(bm!);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

const MAX_U64 = 2n ** 64n - 1n;

/**
 * Whether `id` is a stream id a reader can start after: `<ms>` or `<ms>-<seq>`, decimal, each
 * part an unsigned 64-bit integer (the server refuses a larger one).
 */
export function isStreamId(id: unknown): id is string {
  if (typeof id !== "string" || !/^(0|[1-9][0-9]{0,19})(-(0|[1-9][0-9]{0,19}))?$/.test(id)) return false;
  return id.split("-").every((part) => BigInt(part) <= MAX_U64);
}

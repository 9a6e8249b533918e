/**
 * The entries of a queue's event bus (`emq:{q}:events`, docs/protocol.md "The event bus") as
 * typed events. An entry is `event <kind>`, then for a job `id <id> attempt <n>`, then at most
 * one of `reason` (failed, dead: the error's first 200 bytes), `delay` (delayed, retrying: ms) or
 * `data` (progress: the value, when at most 200 bytes). The operator's bulk verbs write one entry
 * per call, without a job: `cleaned` (`state`, `count`) and `drained` (`count`). A flow's parent
 * writes `waiting` when it is added and `ready` when its last child has settled.
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
  /** `cleaned`, `drained`: how many jobs the call deleted. */
  count?: number;
  /** `cleaned`: the finished state it deleted from (`completed` or `dead`). */
  state?: string;
}

const KINDS: ReadonlySet<string> = new Set(EVENT_KINDS);

/**
 * An entry as read (`XREAD`, bytes kept) → its event; `null` for an entry no transition writes
 * (an unknown kind: a newer server's, or someone else's `XADD`).
 */
export function parseEntry(eventId: string, fields: readonly Buffer[]): BusEvent | null {
  const get = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) get.set(fields[i]!.toString("latin1"), fields[i + 1]!);
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

/**
 * How a BullMQ job's name, data and backoff travel in an EchoMQ job. Every job — added by `add`,
 * `addBulk`, as a flow's leaf or parent, or by a scheduler — uses the core's own fields: the row's
 * `name` and `backoff` (`ADD`, `PARENT`, and `SCHEDULE` for the jobs `FIRE` adds), and its data as
 * the payload's JSON text (what the core `Queue`'s default `json` serializer writes and reads), so
 * the core API reads it the same and this entry reads the core's jobs. An older release wrote a
 * flow's parent and a scheduler's jobs as the envelope `{ "bullmq": 1, name, data, backoff? }`
 * (the core kept no name for them then): such a payload is still read back, where a row has no
 * name, and `updateData` on it keeps the envelope. Results and progress are JSON text. Pure.
 */
import { InvalidArgumentError } from "../errors.js";
import type { JobBackoff } from "../jobs/job-backoff.js";

/** A retry's delay as BullMQ takes it: ms (fixed), or a strategy with its base delay. */
export type Backoff = number | { type: "fixed" | "exponential"; delay?: number; jitter?: number };

/** What a job carries for this entry. */
export interface Carried {
  name: string;
  data: unknown;
  backoff?: Backoff;
  /** They came in an envelope (a flow's parent or a scheduler's job an older release wrote). */
  envelope: boolean;
}

/** The JSON text of a job's data (`undefined` as `null`): the payload the core reads as `job.data`. */
export function encodeData(data: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(data ?? null);
  } catch (err) {
    throw new InvalidArgumentError("data", `must be JSON-serializable: ${(err as Error).message}`);
  }
  if (text === undefined)
    throw new InvalidArgumentError("data", `must be JSON-serializable, got ${typeof data}`);
  return text;
}

/** The envelope payload an older release wrote for a flow's parent or a scheduler's job (`updateData` of one keeps it). */
export function encodeEnvelope(name: string, data: unknown, backoff?: Backoff): string {
  if (typeof name !== "string")
    throw new InvalidArgumentError("name", `must be a string, got ${typeof name}`);
  const envelope: Record<string, unknown> = { bullmq: 1, name, data: data ?? null };
  if (backoff !== undefined) envelope.backoff = backoff;
  return encodeData(envelope);
}

/** A payload as data: its JSON, or its text when it is not JSON (a core job's raw payload). */
function dataOf(payload: Buffer): unknown {
  const text = payload.toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A job read back: with a row `name`, that name, the payload as data and the row's backoff;
 * without one, an envelope's name, data and backoff, or — a core job added without a name — the
 * payload as data with an empty name.
 */
export function decodeJob(payload: Buffer, name?: string, backoff?: JobBackoff): Carried {
  const value = dataOf(payload);
  if (name !== undefined) {
    const carried: Carried = { name, data: value, envelope: false };
    if (backoff !== undefined) carried.backoff = bullmqBackoff(backoff);
    return carried;
  }
  if (typeof value === "object" && value !== null && (value as { bullmq?: unknown }).bullmq === 1) {
    const o = value as { name?: unknown; data?: unknown; backoff?: Backoff };
    const carried: Carried = {
      name: typeof o.name === "string" ? o.name : "",
      data: o.data,
      envelope: true,
    };
    if (o.backoff !== undefined) carried.backoff = o.backoff;
    return carried;
  }
  const carried: Carried = { name: "", data: value, envelope: false };
  if (backoff !== undefined) carried.backoff = bullmqBackoff(backoff);
  return carried;
}

/** BullMQ's backoff as the core's (checked by the caller: src/bullmq/options.ts). */
export function coreBackoff(backoff: Backoff): JobBackoff {
  if (typeof backoff === "number") return backoff;
  if (backoff.type === "fixed") return { type: "fixed", delayMs: backoff.delay ?? 0 };
  return {
    type: "exponential",
    delayMs: backoff.delay ?? 0,
    ...(backoff.jitter === undefined || backoff.jitter === 0 ? {} : { jitter: backoff.jitter }),
  };
}

/** A row's backoff in BullMQ's form (`opts.backoff`: BullMQ reads a number back as fixed). */
function bullmqBackoff(backoff: JobBackoff): Backoff {
  if (typeof backoff === "number") return { type: "fixed", delay: backoff };
  if (backoff.type === "fixed") return { type: "fixed", delay: backoff.delayMs };
  const out: Exclude<Backoff, number> = { type: "exponential", delay: backoff.delayMs };
  if (backoff.jitter !== undefined && backoff.jitter > 0) out.jitter = backoff.jitter;
  return out;
}

/** A processor's result or a progress value as stored: JSON text (`undefined` as `null`). */
export function encodeValue(value: unknown): string {
  return JSON.stringify(value ?? null) ?? "null";
}

/** A stored result or progress value: its JSON, or its text when it is not JSON. */
export function decodeValue(bytes: Buffer | undefined): unknown {
  if (bytes === undefined) return undefined;
  return dataOf(bytes);
}

/** A stored failure (`<ErrorName>: <message>`) as BullMQ's `failedReason`: the message. */
export function reasonOf(text: string): string {
  return text.replace(/^[\w$]*Error: /, "");
}

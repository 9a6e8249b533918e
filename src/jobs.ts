/**
 * The host steps of each transition: validate on the host, build the declared keys, then send the
 * script (wire 4) or its native verb (wire 6) through the connection.
 */
import { assertValidBrandedId, newId } from "./branded-id.js";
import type { Connection } from "./connector/connection.js";
import { EchoMQError, InvalidArgumentError } from "./errors.js";
import { assertValidQueue, jobKey, queueKey } from "./keyspace.js";
import { scripts } from "./scripts/index.js";

export type Payload = string | Uint8Array;

export interface EnqueueOptions {
  /** Your own branded id (idempotency key). Default: a new id. */
  id?: string;
}

export interface EnqueueResult {
  id: string;
  /** True when a job with this id already existed: nothing was written. */
  duplicate: boolean;
}

export interface ClaimedJob {
  id: string;
  payload: Buffer;
  /** The attempt number; it is the lease token later verbs present. */
  attempts: number;
  /** Lease deadline, server time in ms. */
  deadline: number;
}

/** The largest lease the protocol takes (15 decimal digits). */
export const MAX_LEASE_MS = 999_999_999_999_999;
const GENERATED_ID_TRIES = 3;

export function assertPayload(payload: unknown): asserts payload is Payload {
  if (typeof payload !== "string" && !(payload instanceof Uint8Array)) {
    throw new InvalidArgumentError(
      "payload",
      `must be a string or bytes (Uint8Array/Buffer), got ${typeOf(payload)}`,
    );
  }
}

export function assertLeaseMs(leaseMs: unknown): asserts leaseMs is number {
  if (typeof leaseMs !== "number" || !Number.isInteger(leaseMs) || leaseMs <= 0 || leaseMs > MAX_LEASE_MS) {
    throw new InvalidArgumentError(
      "leaseMs",
      `must be a positive integer of milliseconds up to ${MAX_LEASE_MS}, got ${String(leaseMs)}`,
    );
  }
}

function toBytes(payload: Payload): Buffer {
  return typeof payload === "string" ? Buffer.from(payload, "utf8") : Buffer.from(payload);
}

/**
 * Enqueues a job. A caller-supplied id that already exists enqueues nothing and returns
 * `duplicate: true`. A generated id that collides (astronomically rare) is replaced and retried.
 */
export async function enqueue(
  conn: Connection,
  queue: string,
  payload: Payload,
  opts: EnqueueOptions = {},
): Promise<EnqueueResult> {
  assertValidQueue(queue);
  assertPayload(payload);
  const own = opts.id !== undefined;
  if (own) assertValidBrandedId(opts.id);
  const bytes = toBytes(payload);
  for (let attempt = 1; ; attempt++) {
    const id = own ? opts.id! : newId();
    const reply = await conn.eval(
      scripts.enqueue,
      [jobKey(queue, id), queueKey(queue, "pending")],
      [id, bytes],
    );
    if (reply === 1) return { id, duplicate: false };
    if (own) return { id, duplicate: true };
    if (attempt >= GENERATED_ID_TRIES) {
      throw new EchoMQError(
        "EMQ_ID_COLLISION",
        `generated ids collided ${attempt} times in a row on queue ${queue}`,
      );
    }
  }
}

/** True while the queue's `paused` flag is set. */
export async function isPaused(conn: Connection, queue: string): Promise<boolean> {
  assertValidQueue(queue);
  const flag = await conn.send("HGET", [queueKey(queue, "meta"), "paused"]);
  return flag != null && String(flag) === "1";
}

/**
 * Claims the next job under a lease of `leaseMs`, or `null` when the queue is empty or paused.
 * The pause flag is read first, in its own round trip; on a paused queue nothing else is sent.
 */
export async function claim(conn: Connection, queue: string, leaseMs: number): Promise<ClaimedJob | null> {
  assertValidQueue(queue);
  assertLeaseMs(leaseMs);
  if (await isPaused(conn, queue)) return null;
  const reply = (await conn.eval(
    scripts.claim,
    [queueKey(queue, "pending"), queueKey(queue, "active"), queueKey(queue, "")],
    [leaseMs],
  )) as [Buffer, Buffer, number, number] | [];
  if (reply.length === 0) return null;
  const [id, payload, attempts, deadline] = reply;
  return { id: id.toString("latin1"), payload, attempts, deadline };
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

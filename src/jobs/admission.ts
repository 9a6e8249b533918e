/** Host steps that bring jobs in and lease them out: `enqueue`, `add`, `claim`. */
import { newId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { EchoMQError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import { scripts } from "../scripts/index.js";
import {
  assertInteger,
  assertJobId,
  assertLeaseMs,
  assertOptions,
  assertPayload,
  key,
  MAX_INTEGER,
  type Payload,
  row,
  run,
  text,
  toArg,
} from "./common.js";

export interface EnqueueOptions {
  /** Your own branded id (idempotency key). Default: a new id. */
  id?: string;
}

export interface EnqueueResult {
  id: string;
  /** True when a job with this id already existed: nothing was written. */
  duplicate: boolean;
}

export interface AddOptions extends EnqueueOptions {
  /** Score in `pending`: lower is claimed first. Default 0. */
  priority?: number;
  /** Milliseconds from now before the job is due (it waits in `schedule`). Default 0. */
  delay?: number;
  /** Attempts before the job is dead; it wins over a worker's value. Default 0 = the worker decides. */
  maxAttempts?: number;
}

export interface ClaimedJob {
  id: string;
  payload: Buffer;
  /** The attempt number; it is the lease token later verbs present. */
  attempts: number;
  /** Lease deadline, server time in ms. */
  deadline: number;
}

const GENERATED_ID_TRIES = 3;

/** Runs `once(id)` with the caller's id, or with fresh ids while a generated one collides. */
async function admit(
  queue: string,
  ownId: string | undefined,
  once: (id: string) => Promise<boolean>,
): Promise<EnqueueResult> {
  for (let attempt = 1; ; attempt++) {
    const id = ownId ?? newId();
    if (await once(id)) return { id, duplicate: false };
    if (ownId !== undefined) return { id, duplicate: true };
    if (attempt >= GENERATED_ID_TRIES) {
      throw new EchoMQError(
        "EMQ_ID_COLLISION",
        `generated ids collided ${attempt} times in a row on queue ${queue}`,
      );
    }
  }
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
  const { id } = assertOptions(opts);
  if (id !== undefined) assertJobId(id);
  const payloadArg = toArg(payload);
  return admit(queue, id as string | undefined, async (jobId) => {
    const reply = await run(
      conn,
      scripts.enqueue,
      [row(queue, jobId), key(queue, "pending")],
      [jobId, payloadArg],
    );
    return reply === 1;
  });
}

/**
 * Adds a job with a priority, a delay and its own attempt limit. Delay 0: ready now in `pending`
 * at score `priority`; delay > 0: due at server time + delay in `schedule` (`promote` moves it).
 */
export async function add(
  conn: Connection,
  queue: string,
  payload: Payload,
  opts: AddOptions = {},
): Promise<EnqueueResult> {
  assertValidQueue(queue);
  assertPayload(payload);
  const o = assertOptions(opts);
  if (o.id !== undefined) assertJobId(o.id);
  // An option left out takes its default; any other value (null included) must be in range.
  const option = (value: unknown) => (value === undefined ? 0 : value);
  const priority = assertInteger("priority", option(o.priority), -MAX_INTEGER, MAX_INTEGER);
  const delay = assertInteger("delay", option(o.delay), 0, MAX_INTEGER, " of milliseconds");
  const maxAttempts = assertInteger("maxAttempts", option(o.maxAttempts), 0, MAX_INTEGER);
  const payloadArg = toArg(payload);
  const values = [String(priority), String(delay), String(maxAttempts)];
  return admit(queue, o.id as string | undefined, async (id) => {
    const keys = [row(queue, id), key(queue, "pending"), key(queue, "schedule")];
    return (await run(conn, scripts.add, keys, [id, payloadArg, ...values])) === 1;
  });
}

/** True while the queue's `paused` flag is set. */
export async function isPaused(conn: Connection, queue: string): Promise<boolean> {
  assertValidQueue(queue);
  const flag = await conn.send("HGET", [key(queue, "meta"), "paused"]);
  return flag != null && text(flag) === "1";
}

/**
 * Claims the next job under a lease of `leaseMs`, or `null` when the queue is empty or paused.
 * The pause flag is read first, in its own round trip; on a paused queue nothing else is sent.
 */
export async function claim(conn: Connection, queue: string, leaseMs: number): Promise<ClaimedJob | null> {
  assertValidQueue(queue);
  assertLeaseMs(leaseMs);
  if (await isPaused(conn, queue)) return null;
  return claimVerb(conn, queue, leaseMs);
}

/**
 * The claim verb alone, without the host's pause read. A worker on wire 6 uses it: `EMQ.CLAIM`
 * reads the pause flag inside the command (declared difference D2), so the separate round trip
 * would only repeat it. Validate `queue` and `leaseMs` before calling.
 */
export async function claimVerb(
  conn: Connection,
  queue: string,
  leaseMs: number,
): Promise<ClaimedJob | null> {
  const reply = (await run(
    conn,
    scripts.claim,
    [key(queue, "pending"), key(queue, "active"), key(queue, "")],
    [leaseMs],
  )) as [Buffer, Buffer, number, number] | [];
  if (reply.length === 0) return null;
  const [id, payload, attempts, deadline] = reply;
  return { id: text(id), payload, attempts, deadline };
}

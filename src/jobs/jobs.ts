/** The `jobs` family's host steps (module/src/verbs/jobs.rs on the native side): jobs brought in and leased out — `enqueue`, `add`, `claim`, `claimBatch`. */
import { newId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import type { VerbCall } from "../engine/index.js";
import { EchoMQError, InvalidArgumentError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import {
  assertInteger,
  assertJobId,
  assertLeaseMs,
  assertPayload,
  assertTrace,
  key,
  MAX_INTEGER,
  MAX_LIMIT,
  type Payload,
  run,
  text,
  toArg,
  typeOf,
} from "./common.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import { ADD_FOREIGN, checkExtras, EXTRAS_KEYS, type JobExtras, NO_EXTRAS } from "./add-options.js";
import { awaitDurable, checkDurability, type Durability, type DurabilityWait } from "./durability.js";
import { call, verbCall } from "./calls.js";

export interface EnqueueOptions {
  /** Your own branded id (idempotency key). Default: a new id. */
  id?: string;
  /**
   * Acknowledge the add only once it is on `replicas` replicas (`WAIT`) or in AOFs (`WAITAOF`);
   * see `Durability`. A wait that falls short rejects with `DurabilityError` (the job exists).
   */
  durability?: Durability;
}

export interface EnqueueResult {
  id: string;
  /**
   * True when nothing was written: a job with this id already existed, or (with `key`) the key
   * was held, and `id` is then the first job's id.
   */
  duplicate: boolean;
}

export interface AddOptions extends EnqueueOptions, JobExtras {
  /** Score in `pending`: lower is claimed first. Default 0. */
  priority?: number;
  /** Milliseconds from now before the job is due (it waits in `schedule`). Default 0. */
  delay?: number;
  /** Attempts before the job is dead; it wins over a worker's value. Default 0 = the worker decides. */
  maxAttempts?: number;
  /**
   * The trace context of the job's creation, kept on its row (`trace`): a W3C `traceparent`,
   * optionally `;` and the `tracestate`, at most 512 bytes. A queue with `tracing` on sets it to
   * its `create` span; a worker with `tracing` on links its `process` span to it. Default: none.
   */
  trace?: string;
}

export interface ClaimedJob {
  id: string;
  payload: Buffer;
  /** The attempt number; it is the lease token later verbs present. */
  attempts: number;
  /** Lease deadline, server time in ms. */
  deadline: number;
  /** The job's handler time limit in ms (its `timeoutMs`), 0 when it has none. */
  timeoutMs: number;
}

/**
 * A claim flow control held back (docs/protocol.md, "Flow control"): nothing was claimed. Wait
 * `waitMs` (the queue's rate window opens then), or with `waitMs` 0 until a job leaves active
 * (the queue's concurrency is full; a wake says so).
 */
export interface ClaimLimited {
  limited: true;
  waitMs: number;
}

/** What a claim verb answers: a job, a limited claim, or null (nothing to claim, or paused). */
export type ClaimOutcome = ClaimedJob | ClaimLimited | null;

/** The claim verbs' reply, parsed: `[]`/nil → null, an integer → limited, else the job. */
export function claimOutcome(reply: unknown): ClaimOutcome {
  if (typeof reply === "number") return { limited: true, waitMs: reply };
  return claimedJob(Array.isArray(reply) ? (reply as ClaimReply | []) : null);
}

/**
 * The keys `enqueue` takes. `id`'s kind is its own check's (`InvalidIdError`), `durability`'s too
 * (`checkDurability`, naming it `options.durability`).
 */
const ENQUEUE_KEYS = { id: "any", durability: "any" } as const satisfies Record<
  keyof EnqueueOptions,
  KeyType
>;
const ENQUEUE_OPTIONS: OptionTable = { of: "enqueue", keys: ENQUEUE_KEYS, foreign: ADD_FOREIGN };

/** The keys `add` takes. */
export const ADD_OPTIONS: OptionTable = {
  of: "add",
  keys: {
    ...ENQUEUE_KEYS,
    ...EXTRAS_KEYS,
    priority: "number",
    delay: "number",
    maxAttempts: "number",
    trace: "string",
  } satisfies Record<keyof AddOptions, KeyType>,
  foreign: ADD_FOREIGN,
};

/** The keys of a job of `addBulk`, and of `addBulk`'s own options. */
const BULK_JOB: OptionTable = {
  of: "a bulk job",
  keys: { payload: "any", opts: "any" },
  foreign: { data: "payload", name: "a job's name is an option: opts.name" },
};
const BULK_OPTIONS: OptionTable = { of: "addBulk", keys: { durability: "object" } };

const GENERATED_ID_TRIES = 3;

/**
 * An add's reply as a result: `1` added, a bulk string the first job's id (its idempotency key
 * was held), `0` a duplicate id — `null` then when the id was generated (pick another).
 */
function admitted(reply: unknown, id: string, ownId: string | undefined): EnqueueResult | null {
  if (reply === 1) return { id, duplicate: false };
  if (Buffer.isBuffer(reply) || typeof reply === "string") return { id: text(reply), duplicate: true };
  if (ownId !== undefined) return { id: ownId, duplicate: true };
  return null;
}

/** Runs `once(id)` with the caller's id, or with fresh ids while a generated one collides. */
async function admit(
  queue: string,
  ownId: string | undefined,
  once: (id: string) => Promise<unknown>,
): Promise<EnqueueResult> {
  for (let attempt = 1; ; attempt++) {
    const id = ownId ?? newId();
    const result = admitted(await once(id), id, ownId);
    if (result !== null) return result;
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
  const { id, durability } = checkKeys(opts, ENQUEUE_OPTIONS);
  if (id !== undefined) assertJobId(id);
  const wait = checkDurability(durability, "options.durability");
  const job: CheckedAdd = { ownId: id as string | undefined, payload: toArg(payload), values: null };
  return durable(conn, queue, await sendAdd(conn, queue, job), wait);
}

/** The add's result, once its durability wait (if asked) has passed. */
async function durable(
  conn: Connection,
  queue: string,
  result: EnqueueResult,
  wait: DurabilityWait | undefined,
): Promise<EnqueueResult> {
  if (wait) await awaitDurable(conn, queue, [result.id], wait);
  return result;
}

/** An `add` whose arguments passed every check: what its line carries besides the id. */
interface CheckedAdd {
  ownId: string | undefined;
  payload: string | Buffer;
  /**
   * priority, delay, max attempts, trace and the extras (name and backoff among them) as sent;
   * `null` when all are defaults (0, 0, 0, none).
   */
  values: string[] | null;
}

/**
 * Checks one job's payload and options against `table` (`add`'s by default; typed errors naming
 * `where`); nothing is sent.
 */
export function checkAdd(payload: unknown, opts: unknown, where = "", table = ADD_OPTIONS): CheckedAdd {
  assertPayload(payload, `${where}payload`);
  const o = checkKeys(opts, table, `${where}options`, where);
  if (o.id !== undefined) assertJobId(o.id);
  // An option left out takes its default; any other value (null included) must be in range.
  const option = (value: unknown) => (value === undefined ? 0 : value);
  const priority = assertInteger(`${where}priority`, option(o.priority), -MAX_INTEGER, MAX_INTEGER);
  const delay = assertInteger(`${where}delay`, option(o.delay), 0, MAX_INTEGER, " of milliseconds");
  const maxAttempts = assertInteger(`${where}maxAttempts`, option(o.maxAttempts), 0, MAX_INTEGER);
  const trace = assertTrace(`${where}trace`, o.trace);
  const extras = checkExtras(o, where);
  const plain = priority === 0 && delay === 0 && maxAttempts === 0 && trace === "" && extras === null;
  return {
    ownId: o.id as string | undefined,
    payload: toArg(payload),
    values: plain
      ? null
      : [String(priority), String(delay), String(maxAttempts), trace, ...(extras ?? NO_EXTRAS)],
  };
}

/**
 * The transition of one checked `add`. With every option at its default it is `ENQUEUE`, whose
 * writes are exactly `ADD`'s with priority 0, delay 0, no attempt limit, no trace and no extras,
 * on a shorter line (two keys and two values instead of three and thirteen).
 */
function addCall(queue: string, id: string, job: CheckedAdd): VerbCall {
  if (job.values === null) {
    return verbCall("ENQUEUE", queue, [id, job.payload], id);
  }
  return verbCall("ADD", queue, [id, job.payload, ...job.values], id);
}

/** Sends one checked `add`, replacing a generated id that collides. */
function sendAdd(conn: Connection, queue: string, job: CheckedAdd): Promise<EnqueueResult> {
  return admit(queue, job.ownId, async (id) => {
    const { verb, keys, values } = addCall(queue, id, job);
    return run(conn, verb, keys, values);
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
  const job = checkAdd(payload, opts);
  const wait = checkDurability((opts as AddOptions).durability, "options.durability");
  return durable(conn, queue, await sendAdd(conn, queue, job), wait);
}

/**
 * Adds many jobs, each its own `add` transition, in one pipeline (one write, one round trip).
 * Every job is checked first: one bad job throws before anything is sent. Not atomic as a whole:
 * when the server refuses one job, the others may have been added; the first error is thrown.
 * `options.durability` (not a job's own) waits once for the whole batch (`DurabilityError`
 * carries every id).
 */
export async function addBulk(
  conn: Connection,
  queue: string,
  jobs: readonly { payload: Payload; opts?: AddOptions }[],
  options: { durability?: Durability } = {},
): Promise<EnqueueResult[]> {
  assertValidQueue(queue);
  const wait = checkDurability(checkKeys(options, BULK_OPTIONS).durability, "options.durability");
  if (!Array.isArray(jobs)) throw new InvalidArgumentError("jobs", `must be an array, got ${typeOf(jobs)}`);
  const checked = jobs.map((job: unknown, i) => {
    const where = `jobs[${i}].`;
    if (job === undefined) throw new InvalidArgumentError(`jobs[${i}]`, "must be an object, got undefined");
    const { payload, opts } = checkKeys(job, BULK_JOB, `jobs[${i}]`, where);
    return checkAdd(payload, opts, where);
  });
  if (checked.length === 0) return [];
  const ids = checked.map((job) => job.ownId ?? newId());
  const replies = await conn.engine.runBatch(checked.map((job, i) => addCall(queue, ids[i] as string, job)));
  const results = replies.map((reply, i): EnqueueResult | Promise<EnqueueResult> => {
    const job = checked[i] as CheckedAdd;
    if (reply instanceof Error) throw reply;
    const result = admitted(reply, ids[i] as string, job.ownId);
    if (result !== null) return result;
    return sendAdd(conn, queue, job); // a generated id collided: the single path picks a new one
  });
  const added = await Promise.all(results);
  if (wait) {
    await awaitDurable(
      conn,
      queue,
      added.map((r) => r.id),
      wait,
    );
  }
  return added;
}

/** True while the queue's `paused` flag is set. */
export async function isPaused(conn: Connection, queue: string): Promise<boolean> {
  assertValidQueue(queue);
  const flag = await conn.send("HGET", [key(queue, "meta"), "paused"]);
  return flag != null && text(flag) === "1";
}

/**
 * Claims the next job under a lease of `leaseMs`, or `null` when the queue is empty, paused or
 * held back by its limits (`claimVerb` tells how long to wait). The pause flag is read first, in
 * its own round trip; on a paused queue nothing else is sent.
 */
export async function claim(conn: Connection, queue: string, leaseMs: number): Promise<ClaimedJob | null> {
  assertValidQueue(queue);
  assertLeaseMs(leaseMs);
  if (await isPaused(conn, queue)) return null;
  const got = await claimVerb(conn, queue, leaseMs);
  return got && "limited" in got ? null : got;
}

/**
 * The claim verb alone, without the host's pause read. A worker whose engine's claim reads the
 * pause flag itself (the native `EMQ.CLAIM`, declared difference D2) uses it: the separate round
 * trip would only repeat the read. Validate `queue` and `leaseMs` before calling.
 */
export async function claimVerb(conn: Connection, queue: string, leaseMs: number): Promise<ClaimOutcome> {
  return claimOutcome(await call(conn, "CLAIM", queue, [leaseMs]));
}

/** What a batch claim answers: the jobs leased, in order, and the limited claim that ended it, if one did. */
export interface ClaimBatch {
  jobs: ClaimedJob[];
  limited: ClaimLimited | null;
}

/**
 * Leases up to `count` jobs in one call (`CLAIMN`): exactly `count` claims in a row — each job its
 * own lease token and deadline, flow control (limits, groups, rate) applied claim by claim — that
 * stop at the first finding nothing, or held back (`limited`). The queue's pause flag is read
 * inside the transition (declared difference D12): a paused queue answers no jobs. `count` is an
 * integer from 1 to `MAX_LIMIT`.
 */
export async function claimBatch(
  conn: Connection,
  queue: string,
  leaseMs: number,
  count: number,
): Promise<ClaimBatch> {
  assertValidQueue(queue);
  assertLeaseMs(leaseMs);
  assertInteger("count", count, 1, MAX_LIMIT);
  const reply = (await call(conn, "CLAIMN", queue, [leaseMs, count])) as unknown[];
  const batch: ClaimBatch = { jobs: [], limited: null };
  for (const entry of reply) {
    const got = claimOutcome(entry);
    if (got && "limited" in got) batch.limited = got;
    else if (got) batch.jobs.push(got);
  }
  return batch;
}

/** A claim's reply: `[<id>, <payload>, <attempts>, <deadline>, <timeout>]`. */
type ClaimReply = [Buffer, Buffer, number, number, number];

/** A claim's (or blocking claim's) reply as a job, `null` when nothing was claimed. */
function claimedJob(reply: ClaimReply | [] | null): ClaimedJob | null {
  if (reply === null || reply.length === 0) return null;
  const [id, payload, attempts, deadline, timeoutMs] = reply;
  return { id: text(id), payload, attempts, deadline, timeoutMs };
}

/**
 * Host steps of flows (docs/protocol.md, "Flows"): `addParent` (a parent job waits for its
 * children), `settle` (a child's outcome recorded on its parent, in the parent's slot), `ack` (the
 * relayed entry leaves the child queue's outbox), the outbox read, and the entry's encoding —
 * `<parent queue>` NUL `<parent id>` NUL `<child id>` NUL `<outcome>` NUL `<value>`, split on its
 * first four NULs (no queue name or id holds one; the value, last, may).
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertLabel, type ParentRef, parentValue } from "./add-options.js";
import { checkJobBackoff, type JobBackoff } from "./job-backoff.js";
import { assertValidQueue, isValidQueue } from "../keyspace.js";
import {
  assertInteger,
  assertJobId,
  assertOptions,
  assertPayload,
  key,
  MAX_INTEGER,
  MAX_LIMIT,
  type Payload,
  row,
  text,
  toArg,
} from "./common.js";
import { call } from "./calls.js";

/** What a dead child does to its parent: `fail` kills the parent, `ignore` counts it as settled. */
export type ChildFailurePolicy = "fail" | "ignore";

export interface ParentOptions {
  /** Score in `pending` once the children have settled: lower is claimed first. Default 0. */
  priority?: number;
  /** Attempts before the parent is dead; it wins over a worker's value. Default 0 = the worker decides. */
  maxAttempts?: number;
  /** Default `fail`. */
  onChildFailure?: ChildFailurePolicy;
  /** This parent's own parent (a nested flow). */
  parent?: ParentRef;
  /** The parent's name, kept on its row (as `AddOptions.name`). Default: none. */
  name?: string;
  /** The parent's own retry backoff, kept on its row (as `AddOptions.backoff`). Default: the worker's. */
  backoff?: JobBackoff;
}

/** `settle`'s reply: what recording the child did to its parent. */
export type { ParentRef };

export type SettleReply = "waiting" | "ready" | "dead" | "duplicate" | "late" | "gone";

/** The outcome of a child as its outbox entry carries it. */
export type ChildOutcome = "completed" | "failed";

/** One outbox entry, parsed. */
export interface OutboxEntry {
  parent: ParentRef;
  childId: string;
  outcome: ChildOutcome;
  value: Buffer;
}

/** A checked parent reference as the protocol carries it: `<queue>` NUL `<id>`. */
export function parentRefArg(ref: unknown, name = "parent"): string {
  const o = assertOptions(ref, name);
  assertValidQueue(o.queue);
  assertJobId(o.id);
  return parentValue(o as unknown as ParentRef);
}

export function assertPolicy(policy: unknown, name = "onChildFailure"): ChildFailurePolicy {
  if (policy === undefined) return "fail";
  if (policy !== "fail" && policy !== "ignore")
    throw new InvalidArgumentError(name, `must be "fail" or "ignore", got ${JSON.stringify(policy)}`);
  return policy;
}

/** The values of `PARENT` after the id and the payload, checked (typed errors naming `where`). */
export function parentValues(children: number, opts: unknown, where = ""): string[] {
  const o = assertOptions(opts, `${where}options`) as ParentOptions;
  const option = (value: unknown) => (value === undefined ? 0 : value);
  const priority = assertInteger(`${where}priority`, option(o.priority), -MAX_INTEGER, MAX_INTEGER);
  const maxAttempts = assertInteger(`${where}maxAttempts`, option(o.maxAttempts), 0, MAX_INTEGER);
  assertInteger(`${where}children`, children, 1, MAX_INTEGER);
  const policy = assertPolicy(o.onChildFailure, `${where}onChildFailure`);
  const parent = o.parent === undefined ? "" : parentRefArg(o.parent, `${where}parent`);
  const name = o.name === undefined ? "" : assertLabel(`${where}name`, o.name);
  const backoff = checkJobBackoff(`${where}backoff`, o.backoff);
  return [String(priority), String(maxAttempts), String(children), policy, parent, name, backoff];
}

/**
 * Adds a parent that waits in `emq:{q}:waiting` until `children` children have settled → `true`
 * added, `false` the id exists (nothing written). `values`: from `parentValues`.
 */
export async function addParent(
  conn: Connection,
  queue: string,
  id: string,
  payload: Payload,
  values: readonly string[],
): Promise<boolean> {
  assertValidQueue(queue);
  assertJobId(id);
  assertPayload(payload);
  return (await call(conn, "PARENT", queue, [id, toArg(payload), ...values], id)) === 1;
}

/** Records child `childQueue`/`childId`'s outcome on parent `parent` (in the parent's slot). */
export async function settle(
  conn: Connection,
  parent: ParentRef,
  childQueue: string,
  childId: string,
  outcome: ChildOutcome,
  value: Buffer | string,
): Promise<SettleReply> {
  assertValidQueue(parent.queue);
  const q = parent.queue;
  return text(await call(conn, "SETTLE", q, [parent.id, childQueue, childId, outcome, value])) as SettleReply;
}

/** Removes a relayed entry from `queue`'s outbox → whether it was there. */
export async function ack(conn: Connection, queue: string, entry: Buffer): Promise<boolean> {
  return (await call(conn, "ACK", queue, [entry])) === 1;
}

/** The oldest `limit` entries of `queue`'s outbox, as stored. */
export async function outbox(conn: Connection, queue: string, limit: number): Promise<Buffer[]> {
  assertInteger("limit", limit, 1, MAX_LIMIT);
  return (await conn.send("ZRANGE", [key(queue, "outbox"), 0, limit - 1])) as Buffer[];
}

/** The first four NULs of an entry split it; `null` when it is not an entry (or its parts are not valid). */
export function parseEntry(entry: Buffer): OutboxEntry | null {
  const cuts: number[] = [];
  let at = -1;
  while (cuts.length < 4) {
    at = entry.indexOf(0, at + 1);
    if (at === -1) return null;
    cuts.push(at);
  }
  const [a, b, c, d] = cuts as [number, number, number, number];
  const part = (from: number, to: number) => entry.subarray(from, to).toString("utf8");
  const parent = { queue: part(0, a), id: part(a + 1, b) };
  const childId = part(b + 1, c);
  const outcome = part(c + 1, d);
  if (outcome !== "completed" && outcome !== "failed") return null;
  if (!isValidQueue(parent.queue) || !parent.id.startsWith("JOB") || !childId.startsWith("JOB")) return null;
  // A name that is not valid UTF-8 would not survive the round trip through a string.
  if (!Buffer.from(parent.queue, "utf8").equals(entry.subarray(0, a))) return null;
  return { parent, childId, outcome, value: entry.subarray(d + 1) };
}

/** The children recorded on a parent row: results by `<queue>:<id>`, and the failed ones' errors. */
export interface ChildrenValues {
  values: Record<string, string>;
  failures: Record<string, string>;
}

/** Reads parent `id`'s row (`child:` and `failed:` fields); `null` when the row does not exist. */
export async function childrenOf(
  conn: Connection,
  queue: string,
  id: string,
): Promise<ChildrenValues | null> {
  assertValidQueue(queue);
  assertJobId(id);
  const reply = (await conn.send("HGETALL", [row(queue, id)])) as Buffer[] | Record<string, Buffer> | null;
  const pairs: [string, Buffer | string][] = Array.isArray(reply)
    ? Array.from({ length: reply.length / 2 }, (_, i) => [
        (reply[2 * i] as Buffer).toString("utf8"),
        reply[2 * i + 1] as Buffer,
      ])
    : Object.entries(reply ?? {});
  if (pairs.length === 0) return null;
  const out: ChildrenValues = { values: {}, failures: {} };
  for (const [name, value] of pairs) {
    const body = Buffer.isBuffer(value) ? value.toString("utf8") : String(value);
    if (name.startsWith("child:")) out.values[name.slice(6)] = body;
    else if (name.startsWith("failed:")) out.failures[name.slice(7)] = body;
  }
  return out;
}

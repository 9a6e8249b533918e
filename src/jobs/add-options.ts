/**
 * The options of `add` beyond priority, delay and attempts: the job's group, its handler time
 * limit, its flow parent, the caller's idempotency key, its name and its own backoff. Pure checks
 * (typed errors naming the option, nothing sent) and their encoding as `ADD`'s `<group> <key>
 * <key_ttl> <timeout> <parent> <name> <backoff>` values.
 */
import { InvalidArgumentError } from "../errors.js";
import { queueNameProblem } from "../keyspace.js";
import type { KeyType } from "../option-keys.js";
import { assertInteger, assertJobId, assertOptions, MAX_INTEGER, maxBytes, typeOf } from "./common.js";
import { checkJobBackoff, type JobBackoff } from "./job-backoff.js";

/** The longest group or idempotency key, in UTF-8 bytes (the `label` grammar's `max_bytes`). */
const MAX_LABEL_BYTES: number = maxBytes("label");
/** How long an idempotency key is held when `keyTtlMs` is not given: one day. */
export const DEFAULT_KEY_TTL_MS = 86_400_000;

const CONTROL = /[\u0000-\u001f\u007f]/;

/** A flow parent: the queue and id of the job that waits for this one. */
export interface ParentRef {
  queue: string;
  id: string;
}

export interface JobExtras {
  /** The job's group: rate limits and concurrency per group apply to it. Default: none. */
  group?: string;
  /**
   * Your own idempotency key (an order id, a request id): a second add with the same key on
   * this queue within `keyTtlMs` writes nothing and returns the first job's id with
   * `duplicate: true`. Default: none.
   */
  key?: string;
  /** How long the key is held, in ms (only with `key`). Default one day. */
  keyTtlMs?: number;
  /**
   * How long a handler may run, in ms: at the limit its `signal` aborts and the attempt fails
   * with a `TimeoutError` (retried by the backoff like any failure). Default: none.
   */
  timeoutMs?: number;
  /** The flow parent this job is a child of (`FlowProducer` sets it). Default: none. */
  parent?: ParentRef;
  /**
   * The job's name (1–255 bytes of UTF-8 without a control character): kept on its row, shown
   * by `getJob`, the CLI and the dashboard. What the job is, beside its data. Default: none.
   */
  name?: string;
  /**
   * The job's own retry backoff: ms (a fixed delay), or `{ type: "fixed", delayMs }` /
   * `{ type: "exponential", delayMs, maxDelayMs?, jitter? }`. Kept on its row; the worker that
   * fails an attempt uses it instead of its own `backoff`. Default: the worker's.
   */
  backoff?: JobBackoff;
}

/** The kinds of the extras' keys (`add`'s table, with its own keys, is in jobs.ts). */
export const EXTRAS_KEYS = {
  group: "string",
  key: "string",
  keyTtlMs: "number",
  timeoutMs: "number",
  parent: "object",
  name: "string",
  backoff: ["number", "object", "function"],
} as const satisfies Record<keyof JobExtras, KeyType>;

/** BullMQ's job options an add does not take, and what to use instead. */
export const ADD_FOREIGN: Readonly<Record<string, string>> = {
  attempts: "maxAttempts",
  jobId: "use id (your own branded id) or key (an idempotency key, any text)",
  removeOnComplete:
    "finished jobs are kept per worker, not per job: the Worker's keepCompleted (0 deletes each at once), or queue.clean()",
  removeOnFail: "dead jobs are kept per worker, not per job: the Worker's keepDead, or queue.clean()",
  lifo: "EchoMQ has no LIFO order: priority orders pending jobs (lower runs first)",
  repeat: "repeating jobs are schedules: queue.schedule(name, { cron | everyMs, payload, opts })",
  deduplication: "use key (an idempotency key) and keyTtlMs",
  timestamp: "a job's id carries its creation time (idTime(id))",
  keepLogs: "EchoMQ has no such option",
  stackTraceLimit: "EchoMQ has no such option: a failure keeps the error's name and message, not its stack",
  sizeLimit: "EchoMQ has no such option",
  failParentOnFailure: 'set onChildFailure on the parent in a FlowProducer flow ("fail", the default)',
  ignoreDependencyOnFailure: 'set onChildFailure: "ignore" on the parent in a FlowProducer flow',
  removeDependencyOnFailure: 'set onChildFailure: "ignore" on the parent in a FlowProducer flow',
};

/** `ADD`\'s seven values for the extras; all empty/zero when none is set. */
type ExtraValues = [
  group: string,
  key: string,
  keyTtl: string,
  timeout: string,
  parent: string,
  name: string,
  backoff: string,
];

export const NO_EXTRAS: ExtraValues = ["", "", "0", "0", "", "", ""];

/** Whether `value` is a group or idempotency key an add takes (`assertLabel` passes). */
export function isLabel(value: string): boolean {
  const bytes = Buffer.byteLength(value, "utf8");
  return bytes > 0 && bytes <= MAX_LABEL_BYTES && !CONTROL.test(value);
}

/** A group or idempotency key: 1–255 bytes of UTF-8 without a control character. */
export function assertLabel(name: string, value: unknown): string {
  if (typeof value !== "string")
    throw new InvalidArgumentError(name, `must be a string, got ${typeOf(value)}`);
  if (!isLabel(value)) {
    const bytes = Buffer.byteLength(value, "utf8");
    throw new InvalidArgumentError(
      name,
      `must be 1 to ${MAX_LABEL_BYTES} bytes of UTF-8 without a control character, got ${JSON.stringify(value.slice(0, 80))} (${bytes} bytes)`,
    );
  }
  return value;
}

/** A flow parent as `ADD` carries it: `<queue>` NUL `<id>`. */
export function parentValue(parent: ParentRef): string {
  return `${parent.queue}\u0000${parent.id}`;
}

function checkParent(name: string, value: unknown): string {
  const o = assertOptions(value, name);
  const problem = queueNameProblem(o.queue);
  if (problem !== null) throw new InvalidArgumentError(`${name}.queue`, problem);
  try {
    assertJobId(o.id);
  } catch (err) {
    throw new InvalidArgumentError(`${name}.id`, (err as Error).message);
  }
  return parentValue(o as unknown as ParentRef);
}

/** Checks the extras of one job (`where` prefixes option names); `null` when none is set. */
export function checkExtras(o: Record<string, unknown>, where = ""): ExtraValues | null {
  const { group, key, keyTtlMs, timeoutMs, parent, name, backoff } = o;
  if ([group, key, keyTtlMs, timeoutMs, parent, name, backoff].every((v) => v === undefined)) return null;
  if (keyTtlMs !== undefined && key === undefined) {
    throw new InvalidArgumentError(
      `${where}keyTtlMs`,
      "is the lifetime of an idempotency key: give `key` too",
    );
  }
  const ttl = keyTtlMs === undefined ? DEFAULT_KEY_TTL_MS : keyTtlMs;
  return [
    group === undefined ? "" : assertLabel(`${where}group`, group),
    key === undefined ? "" : assertLabel(`${where}key`, key),
    key === undefined
      ? "0"
      : String(assertInteger(`${where}keyTtlMs`, ttl, 1, MAX_INTEGER, " of milliseconds")),
    timeoutMs === undefined
      ? "0"
      : String(assertInteger(`${where}timeoutMs`, timeoutMs, 1, MAX_INTEGER, " of milliseconds")),
    parent === undefined ? "" : checkParent(`${where}parent`, parent),
    name === undefined ? "" : assertLabel(`${where}name`, name),
    checkJobBackoff(`${where}backoff`, backoff),
  ];
}

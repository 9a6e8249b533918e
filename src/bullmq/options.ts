/**
 * BullMQ's options as EchoMQ's: every key checked against the names table (refused by name, with
 * what to use), the connection mapped onto `connect()`'s options, a job's options onto an add's,
 * and BullMQ's backoff computed. Pure.
 */
import { Connection, type ConnectOptions } from "../connector/connection.js";
import type { ClientLike } from "../connector/options.js";
import { BullMQRefusalError, InvalidArgumentError } from "../errors.js";
import type { QueueAddOptions } from "../queue-options.js";
import { backoffDelay } from "../backoff.js";
import { type Backoff, coreBackoff } from "./codec.js";

export type { Backoff } from "./codec.js";
import { entryOf, type Scope } from "./names.js";

/** BullMQ's default for untyped data and results: what a job's `data` is unless the caller types it. */
// biome-ignore lint/suspicious/noExplicitAny: BullMQ's generics default to any, so ported code reads job.data.x
export type Untyped = any;

export interface RepeatOptions {
  pattern?: string;
  every?: number;
  limit?: number;
  tz?: string;
  startDate?: Date | number | string;
  endDate?: Date | number | string;
  immediately?: boolean;
  offset?: number;
  count?: number;
  key?: string;
}

/** BullMQ's job options this entry takes (the rest are refused: docs/migrating-from-bullmq.md). */
export interface JobsOptions {
  priority?: number;
  delay?: number;
  attempts?: number;
  backoff?: Backoff;
  jobId?: string;
  deduplication?: { id: string; ttl?: number };
  repeat?: RepeatOptions;
  [refused: string]: unknown;
}

/**
 * The connection as BullMQ users pass it — ioredis' options, a URL, or an existing ioredis /
 * iovalkey client (its options carried over, its sockets never used) — or an EchoMQ `Connection`.
 */
export type ConnectionOptions =
  | Connection
  | string
  | ClientLike
  | {
      host?: string;
      port?: number;
      username?: string;
      password?: string;
      db?: number;
      tls?: ConnectOptions["tls"];
      connectionName?: string;
      connectTimeout?: number;
      maxRetriesPerRequest?: number | null;
      /** EchoMQ's own: 4 (Lua scripts, default) or 6 (the native module). */
      wire?: ConnectOptions["wire"];
      /** EchoMQ's own: a Valkey Cluster's start nodes. */
      nodes?: ConnectOptions["nodes"];
    };

/** The refusal of `name` in `scope`, with the table's advice. */
export function refusal(scope: Scope, name: string): BullMQRefusalError {
  const entry = entryOf(scope, name);
  if (entry?.status === "refused") return new BullMQRefusalError(`${name} (${scope})`, entry.echomq);
  return new BullMQRefusalError(
    `${name} (${scope})`,
    "it is not a BullMQ name this entry knows (docs/migrating-from-bullmq.md lists them)",
  );
}

/** Every key of `options` that is set must be honoured in `scope`; the first other is refused. */
export function checkNames(scope: Scope, options: unknown, what: string): Record<string, unknown> {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options))
    throw new InvalidArgumentError(
      what,
      `must be an object, got ${Array.isArray(options) ? "an array" : typeof options}`,
    );
  const o = options as Record<string, unknown>;
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined) continue;
    if (entryOf(scope, key)?.status !== "honoured") throw refusal(scope, key);
  }
  return o;
}

/**
 * BullMQ's `connection` as `connect()`'s options (the one place that maps them): a URL, ioredis'
 * option names, or an existing ioredis / iovalkey client go to connect()'s `connection` (which
 * carries a client's options over and never uses its sockets); EchoMQ's `wire` and `nodes` go
 * beside it; `maxRetriesPerRequest` (BullMQ asks workers for `null`) is left out. An EchoMQ
 * `Connection` is returned as it is (the caller keeps it: close() leaves it open).
 */
export function connectionOf(connection: unknown): Connection | ConnectOptions {
  if (connection instanceof Connection) return connection;
  if (typeof connection === "string") return { connection };
  const o = connection as Record<string, unknown> | undefined;
  if (typeof o?.options === "object" && typeof o?.status === "string") return { connection: o as never };
  const {
    wire,
    nodes,
    maxRetriesPerRequest: _,
    ...rest
  } = checkNames("connection", connection ?? {}, "connection");
  const out: ConnectOptions =
    nodes === undefined
      ? { connection: rest as never }
      : { ...(rest as ConnectOptions), nodes: nodes as never };
  if (wire !== undefined) out.wire = wire as ConnectOptions["wire"];
  return out;
}

/** `defaultJobOptions` under `opts`, checked. */
export function jobOptions(defaults: JobsOptions | undefined, opts: unknown, what = "opts"): JobsOptions {
  const own = checkNames("job options", opts, what) as JobsOptions;
  return { ...(checkNames("job options", defaults, "defaultJobOptions") as JobsOptions), ...own };
}

function assertBackoff(backoff: unknown): Backoff | undefined {
  if (backoff === undefined) return undefined;
  const whole = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  if (whole(backoff)) return backoff as number;
  const b = backoff as { type?: unknown; delay?: unknown; jitter?: unknown } | null;
  const delayOk = b?.delay === undefined || whole(b.delay);
  const jitterOk =
    b?.jitter === undefined || (typeof b.jitter === "number" && b.jitter >= 0 && b.jitter <= 1);
  const keysOk = typeof b === "object" && b !== null && Object.keys(b).every((k) => KEYS.has(k));
  if (keysOk && (b.type === "fixed" || b.type === "exponential") && delayOk && jitterOk) {
    if (b.type === "fixed" && (b.jitter ?? 0) !== 0)
      throw new InvalidArgumentError(
        "backoff.jitter",
        "a fixed backoff takes no jitter here (the row keeps fixed:<ms>): use { type: 'exponential', delay, jitter } or no jitter",
      );
    return {
      type: b.type,
      ...(b.delay === undefined ? {} : { delay: b.delay as number }),
      ...(b.jitter === undefined ? {} : { jitter: b.jitter as number }),
    };
  }
  throw new InvalidArgumentError(
    "backoff",
    "must be whole ms or { type: 'fixed' | 'exponential', delay?: whole ms, jitter? in [0, 1] } (a custom strategy is the core Worker's backoff function)",
  );
}

const KEYS = new Set(["type", "delay", "jitter"]);

/**
 * A BullMQ add's options as the core's — `name` (when not empty), `attempts` as `maxAttempts`,
 * `backoff` as the row's own backoff — and the backoff in BullMQ's form (for an envelope).
 */
export function addOptions(
  o: JobsOptions,
  name?: string,
): { core: QueueAddOptions; backoff: Backoff | undefined } {
  const core: QueueAddOptions = { maxAttempts: o.attempts ?? 1 };
  if (name !== undefined) {
    if (typeof name !== "string")
      throw new InvalidArgumentError("name", `must be a string, got ${typeof name}`);
    if (name !== "") core.name = name;
  }
  if (o.priority !== undefined) core.priority = o.priority;
  if (o.delay !== undefined) core.delay = o.delay;
  if (o.jobId !== undefined && o.deduplication !== undefined)
    throw new InvalidArgumentError("jobId", "and deduplication are both an idempotency key here: give one");
  if (o.jobId !== undefined) core.key = String(o.jobId);
  if (o.deduplication !== undefined) {
    const d = o.deduplication as { id?: unknown; ttl?: unknown };
    if (typeof d?.id !== "string") throw new InvalidArgumentError("deduplication.id", "must be a string");
    core.key = d.id;
    if (d.ttl !== undefined) core.keyTtlMs = d.ttl as number;
  }
  const backoff = assertBackoff(o.backoff);
  if (backoff !== undefined) core.backoff = coreBackoff(backoff);
  return { core, backoff };
}

/**
 * The delay before the retry after attempt `attempt` (1-based) of an envelope's job (a flow's
 * parent, a scheduler's job: the row keeps no backoff for them) failed: none without a backoff,
 * else the core's own computation of the same backoff (the row's jobs get it from the core).
 */
export function backoffMs(backoff: Backoff | undefined, attempt: number, random = Math.random): number {
  if (backoff === undefined) return 0;
  const core = coreBackoff(backoff);
  return backoffDelay(
    typeof core === "number" ? { type: "fixed", delayMs: core } : core,
    attempt,
    null,
    random,
  );
}

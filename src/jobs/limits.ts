/**
 * Flow control's host steps (docs/protocol.md, "Flow control"): `setLimits` and `setGroupLimits`
 * write a queue's limits on the server (`LIMIT`), where every claim of every worker and process
 * reads them; `readLimits` reads them back. Bad values are refused here, before anything is sent.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertValidQueue, keyOf, queueKey } from "../keyspace.js";
import { checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import { assertInteger, MAX_INTEGER, maxBytes, text } from "./common.js";
import { call } from "./calls.js";

/** A rate: at most `max` jobs start per window of `durationMs` (a fixed window, see the docs). */
export interface RateLimit {
  max: number;
  durationMs: number;
}

/** The limits of one group (or of every group, as the default). */
export interface GroupLimits {
  rate?: RateLimit;
  /** Active jobs of the group at most. */
  concurrency?: number;
}

/**
 * A queue's limits. Absent = none. `setLimits` **replaces** them, it does not merge: a limit left
 * out is cleared (`{}` clears them all), so pass every limit the queue keeps. A key it does not
 * take (`burst`, BullMQ's `duration`) is refused, and nothing is written.
 */
export interface QueueLimits {
  rate?: RateLimit;
  /** Active jobs of the queue at most, across every worker and process. */
  concurrency?: number;
  /** The default limits of every group (a group's own limits win). */
  group?: GroupLimits;
}

/** What `readLimits` returns: the queue's limits, and every group's own. */
export interface LimitsInfo extends QueueLimits {
  groups: Record<string, GroupLimits>;
}

/** The longest group label (bytes): the `label` grammar's bound. */
const MAX_GROUP_BYTES: number = maxBytes("label");

/** A group label: 1–255 bytes, no control characters. */
function assertGroup(group: unknown, name = "group"): string {
  if (typeof group !== "string" || group.length === 0) {
    throw new InvalidArgumentError(name, "must be a non-empty string");
  }
  if (Buffer.byteLength(group) > MAX_GROUP_BYTES || /[\u0000-\u001f\u007f]/.test(group)) {
    throw new InvalidArgumentError(name, `must be 1-${MAX_GROUP_BYTES} bytes without control characters`);
  }
  return group;
}

const RATE: OptionTable = {
  of: "a rate",
  keys: { max: "number", durationMs: "number" } satisfies Record<keyof RateLimit, KeyType>,
  foreign: { duration: "durationMs" },
};
const GROUP_KEYS = { rate: "object", concurrency: "number" } as const satisfies Record<
  keyof GroupLimits,
  KeyType
>;
const LIMITS_FOREIGN = {
  max: "give a rate: { rate: { max, durationMs } }",
  duration: "give a rate: { rate: { max, durationMs } }",
  limiter: "the limits are this object: { rate: { max, durationMs }, concurrency, group }",
};
const GROUP: OptionTable = { of: "group limits", keys: GROUP_KEYS, foreign: LIMITS_FOREIGN };
const LIMITS: OptionTable = {
  of: "setLimits",
  keys: { ...GROUP_KEYS, group: "object" } satisfies Record<keyof QueueLimits, KeyType>,
  foreign: LIMITS_FOREIGN,
};

/** [rate_max, rate_ms, concurrency] of `limits` (named `name`), checked; absent = 0. */
function values(limits: unknown, name: string, table: OptionTable): [string, string, string] {
  const o = checkKeys(limits, table, name, `${name}.`);
  let max = 0;
  let ms = 0;
  if (o.rate !== undefined) {
    const rate = checkKeys(o.rate, RATE, `${name}.rate`, `${name}.rate.`);
    max = assertInteger(`${name}.rate.max`, rate.max, 1, MAX_INTEGER);
    ms = assertInteger(`${name}.rate.durationMs`, rate.durationMs, 1, MAX_INTEGER, " of milliseconds");
  }
  const concurrency =
    o.concurrency === undefined ? 0 : assertInteger(`${name}.concurrency`, o.concurrency, 1, MAX_INTEGER);
  return [String(max), String(ms), String(concurrency)];
}

type Scope = "queue" | "default" | "group" | "ungroup";

function limit(conn: Connection, queue: string, scope: Scope, group: string, v: string[]): Promise<number> {
  return call(conn, "LIMIT", queue, [scope, group, ...v]) as Promise<number>;
}

/** Limits that must be given: `undefined` is refused (`{}` or `null` say what is meant). */
function given(limits: unknown, meaning: string): void {
  if (limits === undefined)
    throw new InvalidArgumentError("limits", `must be an object, got undefined (${meaning})`);
}

/**
 * Replaces a queue's limits and its groups' defaults (what `limits` leaves out is cleared; `{}`
 * clears them all). Parked jobs go back to `pending`. Returns how many did.
 */
export async function setLimits(conn: Connection, queue: string, limits: QueueLimits): Promise<number> {
  assertValidQueue(queue);
  given(limits, "{} clears them all");
  const own = values(limits, "limits", LIMITS);
  const group = values(limits.group, "limits.group", GROUP);
  return (await limit(conn, queue, "queue", "", own)) + (await limit(conn, queue, "default", "", group));
}

/**
 * Sets one group's own limits (they replace the defaults for that group; `{}` = no limit for
 * it), or clears them (`null`: the defaults apply again). Returns how many parked jobs went back.
 */
export async function setGroupLimits(
  conn: Connection,
  queue: string,
  group: string,
  limits: GroupLimits | null,
): Promise<number> {
  assertValidQueue(queue);
  assertGroup(group);
  given(limits, "null: the defaults apply again; {}: no limit for it");
  if (limits === null) return limit(conn, queue, "ungroup", group, ["0", "0", "0"]);
  return limit(conn, queue, "group", group, values(limits, "limits", GROUP));
}

const FIELDS = ["concurrency", "rate_max", "rate_ms"] as const;

/** A queue's limits as stored (`HGETALL <base>limits`). */
export async function readLimits(conn: Connection, queue: string): Promise<LimitsInfo> {
  assertValidQueue(queue);
  const stored = (await conn.send("HGETALL", [queueKey(queue, "limits")])) as Record<string, Buffer>;
  const pairs = new Map<string, number>();
  for (const [f, v] of Object.entries(stored ?? {})) pairs.set(f, Number(text(v)));
  const info: LimitsInfo = { ...pick(pairs, ""), groups: {} };
  const defaults = pick(pairs, "group_");
  if (defaults.rate || defaults.concurrency) info.group = defaults;
  for (const field of pairs.keys()) {
    for (const f of FIELDS) {
      if (field.startsWith(`${f}:`)) {
        const g = field.slice(f.length + 1);
        info.groups[g] ??= pick(pairs, "", `:${g}`);
      }
    }
  }
  return info;
}

function pick(pairs: Map<string, number>, prefix: string, suffix = ""): GroupLimits {
  const at = (f: string) => pairs.get(`${prefix}${f}${suffix}`) ?? 0;
  const out: GroupLimits = {};
  if (at("rate_max") > 0 && at("rate_ms") > 0) out.rate = { max: at("rate_max"), durationMs: at("rate_ms") };
  if (at("concurrency") > 0) out.concurrency = at("concurrency");
  return out;
}

/** A group as flow control sees it: its jobs active now, and its jobs parked (held back). */
export interface GroupState {
  active: number;
  parked: number;
}

/**
 * Every group with jobs active or parked (`HGETALL <base>groups`, `ZRANGE <base>parked 0 -1`,
 * then `ZCARD <base>group:<g>` for each parked group). Reads only; a group with neither is not
 * listed.
 */
export async function readGroups(conn: Connection, queue: string): Promise<Record<string, GroupState>> {
  assertValidQueue(queue);
  const [counts, parked] = (await Promise.all([
    conn.send("HGETALL", [keyOf(queue, "groups")]),
    conn.send("ZRANGE", [keyOf(queue, "parked"), 0, -1]),
  ])) as [Record<string, Buffer> | null, Buffer[] | null];
  const out: Record<string, GroupState> = {};
  for (const [g, n] of Object.entries(counts ?? {})) out[g] = { active: Number(text(n)) || 0, parked: 0 };
  const names = (parked ?? []).map((g) => g.toString("utf8"));
  const sizes = await Promise.all(names.map((g) => conn.send("ZCARD", [keyOf(queue, "group", g)])));
  names.forEach((g, i) => {
    out[g] ??= { active: 0, parked: 0 };
    out[g].parked = Number(sizes[i]);
  });
  return out;
}

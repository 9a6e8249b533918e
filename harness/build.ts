/**
 * Small builders the listed cases and the model share: ids, a verb's declared keys for a queue,
 * calls and actions.
 */
import type { Call, KeyRef, Mode } from "./executors.js";
import type { Action, SeedArg } from "./actions.js";
import type { DeclaredId } from "./declared.js";
import { type KeySlot, verbOf } from "./verbs.js";

/** A listed case: its actions, run on fresh queues (`A` unless `queues` names more). */
export interface Case {
  name: string;
  queues?: string[];
  actions: Action[];
}

/** Branded ids (JOB + 11 Base62), sorted by their last character. */
export const J = (n: number): string => `JOB${String(n).padStart(11, "0")}`;

export const key = (slot: Exclude<KeySlot, "row">, q = "A"): KeyRef => ({ q, slot });
export const row = (id: string | Buffer, q = "A"): KeyRef => ({ q, row: id });
export const raw = (bytes: string | Buffer): KeyRef => ({ raw: bytes });

/** The declared keys of `verb` for queue `q` (the row for `id`). */
export function keysFor(verb: string, q = "A", id: string | Buffer = ""): KeyRef[] {
  return verbOf(verb).keys.map((slot) => (slot === "row" ? row(id, q) : key(slot, q)));
}

export interface CallOptions {
  q?: string;
  keys?: KeyRef[];
  numkeys?: string | null;
  mode?: Mode;
  host?: boolean;
  expect?: "equal" | DeclaredId;
}

export function callOf(verb: string, values: (string | Buffer)[], o: CallOptions = {}): Call {
  const keys = o.keys ?? keysFor(verb, o.q ?? "A", values[0] ?? "");
  return { verb, keys, values, ...(o.numkeys !== undefined ? { numkeys: o.numkeys } : {}) };
}

/** A call action. */
export function C(verb: string, values: (string | Buffer)[], o: CallOptions = {}): Action {
  return {
    kind: "call",
    call: callOf(verb, values, o),
    ...(o.mode ? { mode: o.mode } : {}),
    ...(o.host !== undefined ? { host: o.host } : {}),
    ...(o.expect ? { expect: o.expect } : {}),
  };
}

export const seed = (...commands: SeedArg[][]): Action => ({ kind: "seed", commands });
export const wait = (ms: number): Action => ({ kind: "wait", ms });

/** A W3C traceparent, as `ADD` carries it (`<trace>`). */
export const TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
/** Trace values outside the `trace` grammar (each refused by both executors). */
export const BAD_TRACES: readonly string[] = [
  "x",
  TRACE.toUpperCase(),
  `ff${TRACE.slice(2)}`,
  `00-${"0".repeat(32)}-b7ad6b7169203331-01`,
  `${TRACE.slice(0, 36)}${"0".repeat(16)}-01`,
  TRACE.slice(0, -1),
  `${TRACE}-`,
  `${TRACE} `,
  `${TRACE};`,
  `${TRACE};a\tb`,
  `${TRACE};\u00e9`,
  `${TRACE};${"s".repeat(457)}`,
  "\0",
];

/* common steps */
export const enq = (id: string, payload: string | Buffer = "p", q = "A") =>
  C("ENQUEUE", [id, payload], { q });
/** `ADD`'s values after `<trace>` when none is set: group, key, key ttl, timeout, parent. */
export const NO_EXTRAS = ["", "", "0", "0", "", "", ""] as const;
export const addJob = (id: string, priority = "0", delay = "0", max = "0", q = "A", trace = "") =>
  C("ADD", [id, "p", priority, delay, max, trace, ...NO_EXTRAS], { q });
export const claim = (lease = "30000", o: CallOptions = {}) => C("CLAIM", [lease], o);
/** An enqueued, then claimed job (lease token "1"). */
export const claimed = (id: string, lease = "30000"): Action[] => [enq(id), claim(lease)];

/* calls the listed cases share */
export const BIG = "999999999999999";
/** A call run lease-exact: script, command and TIME in one MULTI/EXEC. */
export const exact = { mode: "exact" as const };
/** A failing-attempt call: FAIL with backoff, max attempts and keep. */
export const fail = (
  id: string,
  token: string,
  backoff = "0",
  max = "5",
  keep = "10",
  error: string | Buffer = "boom",
) => C("FAIL", [id, token, error, backoff, max, keep, ""]);
export const promote = (limit = "100") => C("PROMOTE", [limit]);
export const reschedule = (id: string, token = "1", delay = "5000", o = {}) =>
  C("RESCHEDULE", [id, token, delay], o);
export const requeue = (id: string, token = "1", max = "3") => C("REQUEUE", [id, token, max]);
/** A key of the queue holding a string: every type gate refuses it. */
export const wrongType = (slot: Parameters<typeof key>[0]) => seed(["SET", key(slot), "not a set"]);
/** `LIMIT` of a scope (`queue`, `default`, `group`): rate max per ms, concurrency. */
export const limitOf = (scope: string, group: string, max: string, ms: string, concurrency: string) =>
  C("LIMIT", [scope, group, max, ms, concurrency]);
/** `id` added in group `g` (ADD's `<group>`). */
export const grouped = (id: string, g: string): Action =>
  C("ADD", [id, "p", "0", "0", "0", "", g, "", "0", "0", "", "", ""]);

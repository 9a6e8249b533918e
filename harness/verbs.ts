/**
 * The verbs as the harness drives them, made from the protocol data (`protocol/verbs/*.json`):
 * each verb's form, declared keys, values (with their grammars and refusal names), the time
 * scores it writes, and the pure checks the harness needs to classify a call before it runs
 * (shape, layout, value grammars, orphans).
 */
import { isTraceContext } from "../src/observe/trace-context.js";
import {
  formOf,
  type Grammar,
  JOB_CORE,
  type KeySlot as DataKeySlot,
  PROTOCOL,
  type VerbSpec,
} from "../src/protocol.js";
import { type DerivedKey, KEY_CLOSE, KEY_HEAD, KEY_TYPES } from "../src/keyspace.js";
import type { RawDump } from "./dump.js";

/** The key slots of a queue's transitions (the protocol data's, the brand key aside). */
export type KeySlot = Exclude<DataKeySlot, "version">;
export type { Grammar };
export type TimeSet = "active" | "schedule" | "done" | "dead" | "waiting" | "outbox";
export const TIME_SETS: readonly TimeSet[] = ["active", "schedule", "done", "dead", "waiting", "outbox"];

interface ValueSlot {
  /** The slot's placeholder, as the form writes it. */
  slot: string;
  /** Numeric values: the grammar and the name refusals use. */
  grammar?: Grammar;
  name?: string;
}

export interface Verb {
  verb: string;
  /** The script twin (`src/scripts/<script>.lua`); null for a native-only verb. */
  script: string | null;
  form: string;
  keys: readonly KeySlot[];
  /** Index of the key the queue name is recovered from. */
  anchor: number;
  values: readonly ValueSlot[];
  /** Time scores the verb writes: the set and the value index of its offset (null = now). */
  times: readonly { set: TimeSet; offset: number | null }[];
  /**
   * A time in the reply: the array index (null = the reply itself) and its offset's value index;
   * `each`: the reply is a list of such replies (CLAIMN's), the time at `index` in each;
   * `after`: the list starts after that many leading elements (COMPLETEN's outcomes).
   */
  replyTime?: { index: number | null; offset: number; each?: boolean; after?: number };
  /** The last `last` values repeat, given 1 to `max` times (COMPLETEN's triples). */
  repeat?: { last: number; max: number };
  /**
   * An admission (`ENQUEUE`, `ADD`, `RETRY`): refused over `maxmemory` before it runs, writing
   * nothing. Every other verb is a drain or control: it runs, and writes, over `maxmemory`.
   */
  admission: boolean;
}

/** A job-core verb's spec as the harness's `Verb`. */
function fromSpec(spec: VerbSpec): Verb {
  const valueAt = (slot: string) => {
    const at = spec.values.findIndex((v) => v.slot === slot);
    if (at === -1) throw new Error(`${spec.verb}: no value ${slot}`);
    return at;
  };
  const verb: Verb = {
    verb: spec.verb,
    script: spec.script,
    form: formOf(spec),
    keys: spec.keys.map((k) => k.slot as KeySlot),
    anchor: spec.keys.findIndex((k) => k.anchor === true),
    values: spec.values.map((v) => {
      const slot: ValueSlot = { slot: `<${v.slot}>` };
      if (v.grammar) slot.grammar = v.grammar;
      if (v.name) slot.name = v.name;
      return slot;
    }),
    times: spec.times.map((t) => ({ set: t.set, offset: t.offset === null ? null : valueAt(t.offset) })),
    admission: spec.class === "admission",
  };
  if (spec.repeat) verb.repeat = { ...spec.repeat };
  if (spec.reply_time)
    verb.replyTime = {
      index: spec.reply_time.index,
      offset: valueAt(spec.reply_time.offset),
      ...(spec.reply_time.each ? { each: true } : {}),
      ...(spec.reply_time.after ? { after: spec.reply_time.after } : {}),
    };
  return verb;
}

export const VERBS: readonly Verb[] = JOB_CORE.map(fromSpec);

export function verbOf(name: string): Verb {
  const found = VERBS.find((v) => v.verb === name);
  if (!found) throw new Error(`unknown verb ${name}`);
  return found;
}

/* ------------------------------------------------------------------ value grammars */

const DIGITS = /^(0|[1-9][0-9]{0,14})$/;

/** Whether `text` is accepted by `grammar` (docs/protocol.md, Value grammars). */
export function accepts(grammar: Grammar, text: string): boolean {
  switch (grammar) {
    case "delay":
    case "count":
      return DIGITS.test(text);
    case "ms":
    case "positive":
      return DIGITS.test(text) && text !== "0";
    case "priority":
      return DIGITS.test(text) || (text.startsWith("-") && accepts("positive", text.slice(1)));
    case "limit":
      return accepts("positive", text) && Number(text) <= 10_000;
    case "trace":
      return isTraceContext(text);
    case "label":
      return text.length <= 255 && !CONTROL.test(text);
    case "parent":
      return text === "" || isParent(text);
    case "name":
      return isName(Buffer.from(text, "latin1"));
    case "payload":
    case "result":
    case "progress":
    case "line":
    case "error":
    case "stack":
      return text.length <= (PROTOCOL.grammars[grammar].max_bytes ?? Number.POSITIVE_INFINITY);
  }
}

/** A control byte (C0 or DEL), in a latin1 view of the bytes. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** `<queue>` NUL `<id>`: a queue name by the queue-name rule, an id with the JOB prefix (bytes as latin1). */
function isParent(text: string): boolean {
  const at = text.indexOf("\u0000");
  if (at < 1 || at > 255) return false;
  const queue = text.slice(0, at);
  const id = text.slice(at + 1);
  return !/[{}]/.test(queue) && !CONTROL.test(queue) && id.startsWith("JOB") && !CONTROL.test(id);
}

const RULES: Record<Grammar, string> = Object.fromEntries(
  Object.entries(PROTOCOL.grammars).map(([grammar, g]) => [grammar, g.rule]),
) as Record<Grammar, string>;

/** A value grammar's refusal text. */
export function valueError(verb: string, name: string, grammar: Grammar): string {
  return `ERR EMQ.${verb} ${name} must be ${RULES[grammar]}`;
}

/** The `name` grammar: 1 to 255 bytes, none of them a control byte (0x00–0x1F, 0x7F). */
function isName(bytes: Buffer): boolean {
  return bytes.length > 0 && bytes.length <= 255 && !bytes.some((b) => b < 0x20 || b === 0x7f);
}

/* ------------------------------------------------------------------ keys and layout */

/** A queue's key by its name in the data (`key_slots`, `derived_keys`), and a parameter after it. */
export function derivedKey(
  queue: Buffer | string,
  name: KeySlot | DerivedKey,
  param: Buffer | string = "",
): Buffer {
  return Buffer.concat([
    Buffer.from(KEY_HEAD),
    Buffer.from(queue),
    Buffer.from(KEY_CLOSE + KEY_TYPES.get(name)!),
    Buffer.from(param),
  ]);
}

/** `emq:{<q>}:<type>` of a slot ("base" is the empty type), built from the data. */
export function queueKey(queue: Buffer | string, slot: Exclude<KeySlot, "row">): Buffer {
  return derivedKey(queue, slot);
}

export function rowKey(queue: Buffer | string, id: Buffer | string): Buffer {
  return derivedKey(queue, "row", id);
}

/** The name and type of `emq:{<name>}:<type>`: the name runs to the first `}`, then `:`. */
function splitQueueKey(key: Buffer): { name: Buffer; type: Buffer } | null {
  const prefix = Buffer.from(KEY_HEAD);
  if (key.length < prefix.length || !key.subarray(0, prefix.length).equals(prefix)) return null;
  const close = key.indexOf(0x7d, prefix.length);
  if (close < 0 || key[close + 1] !== 0x3a) return null;
  return { name: key.subarray(prefix.length, close), type: key.subarray(close + 2) };
}

/** A queue name the module accepts: 1 to 255 bytes, no `{`, `}` or control byte (0x00–0x1F, 0x7F). */
function validQueueName(name: Buffer): boolean {
  return (
    name.length > 0 &&
    name.length <= 255 &&
    !name.some((b) => b === 0x7b || b === 0x7d || b < 0x20 || b === 0x7f)
  );
}

/** Layout: the queue name when every declared key is that queue's key of its slot, else null. */
export function layoutQueue(verb: Verb, keys: readonly Buffer[], values: readonly Buffer[]): Buffer | null {
  const anchor = keys[verb.anchor];
  const slot = verb.keys[verb.anchor];
  if (anchor === undefined || slot === undefined || slot === "row") return null;
  const split = splitQueueKey(anchor);
  if (split === null || !validQueueName(split.name)) return null;
  if (!split.type.equals(Buffer.from(slot === "base" ? "" : slot))) return null;
  const name = split.name;
  const all = verb.keys.every((s, i) => {
    const key = keys[i];
    if (key === undefined) return false;
    if (s === "row") return values[0] !== undefined && key.equals(rowKey(name, values[0]));
    return key.equals(queueKey(name, s));
  });
  return all ? name : null;
}

/**
 * Whether the head of `pending` (lowest score, ties by id) in `state` is an orphan, as a claim
 * sees it: no `JOB` prefix, or its row is not a hash.
 */
export function orphanAhead(state: RawDump, queue: Buffer): boolean {
  const pending = state.get(queueKey(queue, "pending").toString("latin1"));
  if (pending?.type !== "zset") return false;
  const [head] = [...pending.members].sort(([a, x], [b, y]) => Number(x) - Number(y) || Buffer.compare(a, b));
  if (head === undefined) return false;
  const id = head[0];
  const row = state.get(rowKey(queue, id).toString("latin1"));
  return !id.subarray(0, 3).equals(Buffer.from("JOB")) || row?.type !== "hash";
}

/* ------------------------------------------------------------------ shape */

type Shape =
  /** EVAL itself refuses the tail (no numkeys, numkeys not an integer, negative, beyond the args). */
  | { kind: "eval-refuses" }
  | { kind: "wrong-keys" }
  | { kind: "wrong-values" }
  | { kind: "ok"; keys: Buffer[]; values: Buffer[] };

const EVAL_INTEGER = /^(0|-?[1-9][0-9]*)$/;

/**
 * The shape of a tail `<numkeys> <keys…> <values…>` as both sides see it. EVAL parses numkeys as
 * a signed 64-bit integer and refuses a malformed, negative or too large one itself; when EVAL
 * accepts it, the script and the command check the same two counts.
 */
export function shapeOf(verb: Verb, tail: readonly Buffer[]): Shape {
  const first = tail[0];
  if (first === undefined) return { kind: "eval-refuses" };
  const text = first.toString("latin1");
  if (!EVAL_INTEGER.test(text) || text.length > 19 || BigInt(text) > 9223372036854775807n) {
    return { kind: "eval-refuses" };
  }
  const n = Number(text);
  if (n < 0 || n > tail.length - 1) return { kind: "eval-refuses" };
  if (n !== verb.keys.length) return { kind: "wrong-keys" };
  if (!valuesFit(verb, tail.length - 1 - n)) return { kind: "wrong-values" };
  return { kind: "ok", keys: tail.slice(1, 1 + n), values: tail.slice(1 + n) };
}

/** Whether `count` values fit the verb's form: its values, or for a repeating form 1 to `max` groups. */
function valuesFit(verb: Verb, count: number): boolean {
  const n = verb.values.length;
  if (!verb.repeat) return count === n;
  const more = count - n;
  return more >= 0 && more % verb.repeat.last === 0 && more / verb.repeat.last < verb.repeat.max;
}

export function wrongKeys(verb: Verb): string {
  return `ERR EMQ.${verb.verb} wrong number of keys: ${verb.form}`;
}

export function wrongValues(verb: Verb): string {
  return `ERR EMQ.${verb.verb} wrong number of values: ${verb.form}`;
}

export function layoutError(verb: string): string {
  return `ERR EMQ.${verb} keys do not match the wire-4 layout`;
}

/**
 * The harness's servers cut streams into nodes of 4 entries with no byte bound: the event bus's
 * approximate trims (`MAXLEN ~`, `MINID ~`) remove whole nodes, so small bounds trim after a few
 * entries, and a node ends at the same entry on both sides whatever their entry ids take in bytes
 * (their milliseconds differ in window mode).
 */
export const STREAM_NODE_ENTRIES = 4;

/** The queue's event bus settings as every transition reads them from its `meta`. */
export const BUS_DEFAULTS = { maxlen: 10_000, maxageMs: 86_400_000 };

export const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
export const BRAND = PROTOCOL.brands.wire6;
export const VERSION_KEY = PROTOCOL.brands.key;

export function emqwire(found: Buffer | null): string {
  return `EMQWIRE expected ${BRAND} found ${found === null ? "(nil)" : found.toString("latin1")}`;
}

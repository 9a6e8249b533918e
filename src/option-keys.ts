/**
 * Every options object of the public API checked against a declared table of its keys: not an
 * object, a key it does not take (with the EchoMQ name for another library's, and "did you mean"
 * for a close misspelling), or a value of the wrong kind is an `InvalidArgumentError` naming the
 * key, before anything is sent. Pure. Ranges and grammars stay with each option's own check.
 */
import { InvalidArgumentError } from "./errors.js";

/**
 * What a key holds: `bytes` a `Uint8Array` (a `Buffer`), `date` a `Date`; `any` leaves the kind
 * to the key's own check (one with an error class of its own, e.g. a branded id's).
 */
type Kind = "string" | "number" | "boolean" | "object" | "array" | "function" | "bytes" | "date" | "any";

/** One kind, or any of several. */
export type KeyType = Kind | readonly Kind[];

export interface OptionTable {
  /** What the options belong to, as the messages name it: `add`, `connect`, `Worker`. */
  of: string;
  keys: Readonly<Record<string, KeyType>>;
  /**
   * Another library's names (`source`'s, default BullMQ) → what to use instead: an EchoMQ key
   * (one word: "use maxAttempts"), or a sentence saying where it lives or that it does not exist.
   */
  foreign?: Readonly<Record<string, string>>;
  /** Whose names `foreign` lists. Default `BullMQ`. */
  source?: string;
}

/** Hints several tables share: BullMQ's `prefix` and `limiter`. */
export const FIXED_KEYSPACE = "the keyspace is fixed (emq:{<queue>}:…): use another queue name";
export const LIMITS_ARE_THE_QUEUES =
  "flow control is the queue's, for every worker: queue.setLimits({ rate: { max, durationMs } })";

const ARTICLE: Record<Exclude<Kind, "any">, string> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  function: "a function",
  bytes: "bytes (Uint8Array/Buffer)",
  date: "a Date",
};

/** A value's kind for a message: a short string shown too (`string "6379"`). */
function described(value: unknown): string {
  if (typeof value !== "string") return kindOf(value);
  return value.length <= 40 ? `string ${JSON.stringify(value)}` : `string (${value.length} characters)`;
}

/** The kind of a value, as the messages name it. */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (value instanceof Uint8Array) return "bytes";
  if (value instanceof Date) return "Date";
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isKind(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case "any":
      return true;
    case "object":
      return isPlainObject(value);
    case "array":
      return Array.isArray(value);
    case "bytes":
      return value instanceof Uint8Array;
    case "date":
      return value instanceof Date;
    default:
      return typeof value === kind;
  }
}

/**
 * `value` checked against `table`: absent (`undefined`) is `{}`; else it must be an object
 * (named `name`) whose every key the table declares, each of its declared kind (`undefined`
 * counts as absent). The error names the key as `where` + key. Returns the object itself.
 */
export function checkKeys(
  value: unknown,
  table: OptionTable,
  name = "options",
  where = "",
): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    throw new InvalidArgumentError(name, `must be an object, got ${kindOf(value)}`);
  }
  for (const key of Object.keys(value)) {
    const type = table.keys[key];
    if (type === undefined) throw unknownKey(key, table, where);
    const v = value[key];
    const kinds: readonly Kind[] = typeof type === "string" ? [type] : type;
    if (v !== undefined && !kinds.some((kind) => isKind(v, kind))) {
      const expected = kinds.map((kind) => ARTICLE[kind as Exclude<Kind, "any">]).join(" or ");
      throw new InvalidArgumentError(`${where}${key}`, `must be ${expected}, got ${described(v)}`);
    }
  }
  return value;
}

function unknownKey(key: string, table: OptionTable, where: string): InvalidArgumentError {
  const head = `${table.of} takes no option ${JSON.stringify(key)}`;
  const hint =
    table.foreign !== undefined && Object.hasOwn(table.foreign, key) ? table.foreign[key] : undefined;
  if (hint !== undefined) {
    const instead = /^[A-Za-z]+$/.test(hint) ? `use ${hint}` : hint;
    return new InvalidArgumentError(
      `${where}${key}`,
      `${head} (${table.source ?? "BullMQ"}'s name): ${instead}`,
    );
  }
  const near = closest(key, Object.keys(table.keys));
  const tail =
    near !== undefined ? `: did you mean ${near}?` : `; it takes ${Object.keys(table.keys).join(", ")}`;
  return new InvalidArgumentError(`${where}${key}`, head + tail);
}

/**
 * The candidate nearest `word` (case aside) when it is a close misspelling: at most 2 edits
 * (insertions, deletions, substitutions, swaps of neighbours), and fewer than the shorter's
 * length (so `xy` is no misspelling of `id`).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance && d < Math.min(word.length, candidate.length)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** The optimal-string-alignment distance: edits, a swap of two neighbours counting one. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

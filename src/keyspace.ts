/**
 * The keyspace grammar, from the protocol data (`protocol.json` `key_slots`, `derived_keys`):
 * every key of queue `q` is its base `emq:{q}:` and a type. The braces are the cluster hashtag,
 * so all keys of one queue live in one slot. Pure functions, no I/O; no key is written here.
 */
import { InvalidArgumentError, InvalidQueueNameError } from "./errors.js";
import { assertValidBrandedId } from "./branded-id.js";
import { PROTOCOL, type DerivedKey, type KeyPrefix, type KeySlot, type QueueKeyType } from "./verbs/data.js";

export type { DerivedKey, KeyPrefix, KeySlot, QueueKeyType } from "./verbs/data.js";

/** The key every node's brand lives in (the version fence), from the data's `brands.key`. */
export const VERSION_KEY = PROTOCOL.brands.key;

/** Where the queue name stands in a pattern of the data: `{q}` (inside the hashtag's braces). */
const NAME = "{q}";
const PARAM = /<[a-z]+>$/;
const BASE = PROTOCOL.key_slots.base.pattern;

/** The text before and after the queue name in the base (`emq:{` and `}:`). */
export const KEY_HEAD = BASE.slice(0, BASE.indexOf(NAME)) + "{";
export const KEY_CLOSE = "}" + BASE.slice(BASE.indexOf(NAME) + NAME.length);

/** What follows the base in a key of the data: `pending`, `` (the base), `job:`, `group:`. */
function typeOf(pattern: string): string {
  const rest = pattern.startsWith("<base>") ? pattern.slice("<base>".length) : pattern.slice(BASE.length);
  return rest.replace(PARAM, "");
}

/** Each queue key of the data by name (the slots but the brand key, and the derived keys): its type. */
export const KEY_TYPES: ReadonlyMap<Exclude<KeySlot, "version"> | DerivedKey, string> = new Map(
  [
    ...Object.entries(PROTOCOL.key_slots).filter(([name]) => name !== "version"),
    ...Object.entries(PROTOCOL.derived_keys),
  ].map(([name, key]) => [name as Exclude<KeySlot, "version"> | DerivedKey, typeOf(key.pattern)]),
);

/** A key type: one of a queue's keys, or a prefix of one per parameter and its parameter. */
export type KeyType = QueueKeyType | `${KeyPrefix}${string}`;

/**
 * The base `emq:{` + q + `}:`, then `type`: a builder only (the name rule is `assertValidQueue`'s). A
 * queue that is not a string throws `InvalidQueueNameError`, a type that is not one `InvalidArgumentError`.
 */
export function queueKey(queue: string, type: KeyType): string {
  if (typeof queue !== "string") throw new InvalidQueueNameError(queue, "a queue name must be a string");
  if (typeof type !== "string") {
    throw new InvalidArgumentError("type", `a key type must be a string, got ${typeof type}`);
  }
  return KEY_HEAD + queue + KEY_CLOSE + type;
}

/**
 * A queue key by its name in the data: `keyOf(q, "pending")`, `keyOf(q, "group", g)`,
 * `keyOf(q, "repeat", name)`, `keyOf(q, "row", id)` (taken as given: `jobKey` checks the id).
 */
export function keyOf(queue: string, name: Exclude<KeySlot, "version"> | DerivedKey, param = ""): string {
  return queueKey(queue, (KEY_TYPES.get(name)! + param) as KeyType);
}

const ROW = KEY_TYPES.get("row") as KeyPrefix;

/** The job row `emq:{q}:job:<id>`; refuses an id that is not a fully valid branded id. */
export function jobKey(queue: string, id: string): string {
  assertValidBrandedId(id);
  return queueKey(queue, `${ROW}${id}`);
}

/** The longest queue name, in UTF-8 bytes (the module's layout check holds the same bound). */
export const MAX_QUEUE_BYTES = 255;

/** A brace (it would move the cluster hashtag) or a control character (C0 or DEL). */
const FORBIDDEN = /[{}\u0000-\u001f\u007f]/;

/**
 * The one queue-name rule, shared with the module's layout check: 1 to 255 bytes of UTF-8, no
 * `{` or `}`, no control character (U+0000–U+001F, U+007F).
 */
export function queueNameProblem(queue: unknown): string | null {
  if (typeof queue !== "string") return "a queue name must be a string";
  if (queue.length === 0) return "a queue name must not be empty";
  if (FORBIDDEN.test(queue)) {
    return "a queue name must not contain '{', '}' (a brace would move the cluster hashtag) or a control character";
  }
  const bytes = Buffer.byteLength(queue, "utf8");
  if (bytes > MAX_QUEUE_BYTES)
    return `a queue name is at most ${MAX_QUEUE_BYTES} bytes of UTF-8, got ${bytes}`;
  return null;
}

/** True when the name follows the queue-name rule (`queueNameProblem`). */
export function isValidQueue(queue: unknown): queue is string {
  return queueNameProblem(queue) === null;
}

/** Throws `InvalidQueueNameError` naming the rule and the offending name. */
export function assertValidQueue(queue: unknown): asserts queue is string {
  const problem = queueNameProblem(queue);
  if (problem !== null) throw new InvalidQueueNameError(queue, problem);
}

/**
 * The hashtag Valkey Cluster hashes: the bytes between the first `{` and the first `}` after it,
 * when that is non-empty; otherwise the whole key.
 */
export function hashtag(key: Uint8Array): Uint8Array {
  const open = key.indexOf(0x7b);
  if (open === -1) return key;
  const close = key.indexOf(0x7d, open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.subarray(open + 1, close);
}

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16-XMODEM (poly 0x1021, init 0), as Valkey Cluster computes it. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The cluster slot of a key (string keys are UTF-8 encoded). */
export function slot(key: string | Uint8Array): number {
  const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : key;
  return crc16(hashtag(bytes)) % 16384;
}

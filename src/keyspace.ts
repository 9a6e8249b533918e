/**
 * The keyspace grammar: every key of queue `q` is `emq:{q}:<type>`. The braces are the cluster
 * hashtag, so all keys of one queue live in one slot. Pure functions, no I/O.
 */
import { InvalidQueueNameError } from "./errors.js";
import { assertValidBrandedId } from "./branded-id.js";

/** The key every node's brand lives in (the version fence). */
export const VERSION_KEY = "{emq}:version";

/** The per-queue key types (SPEC §2). `job:` rows are built by `jobKey`. */
export type QueueKeyType = "pending" | "active" | "schedule" | "done" | "dead" | "meta" | "";

/** `emq:{` + q + `}:` + type. Throws `TypeError` for non-string input. */
export function queueKey(queue: string, type: string): string {
  if (typeof queue !== "string") throw new TypeError(`queueKey: queue must be a string, got ${typeof queue}`);
  if (typeof type !== "string") throw new TypeError(`queueKey: type must be a string, got ${typeof type}`);
  return "emq:{" + queue + "}:" + type;
}

/** The job row `emq:{q}:job:<id>`; refuses an id that is not a fully valid branded id. */
export function jobKey(queue: string, id: string): string {
  assertValidBrandedId(id);
  return queueKey(queue, "job:") + id;
}

/** False when the name holds `{`, `}` or NUL (or is not a string). The empty name is valid here. */
export function isValidQueue(queue: unknown): queue is string {
  return typeof queue === "string" && !/[{}\u0000]/.test(queue);
}

/** Throws `InvalidQueueNameError` naming the rule and the offending name. */
export function assertValidQueue(queue: unknown): asserts queue is string {
  if (typeof queue !== "string") throw new InvalidQueueNameError(queue, "a queue name must be a string");
  if (!isValidQueue(queue)) {
    throw new InvalidQueueNameError(
      queue,
      "a queue name must not contain '{', '}' or NUL (a brace would move the cluster hashtag)",
    );
  }
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

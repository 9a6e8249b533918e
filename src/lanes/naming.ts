/**
 * The lane naming rule: how a laned queue's physical queues are named, so that its k lanes spread
 * evenly over the cluster's 16384 slots (docs/protocol.md, "Lanes"). Pure functions.
 *
 * * k = 1: the one lane is the queue itself.
 * * k ≥ 2: lane i (0 ≤ i < k) is `<name>@<k>.<i>.<t>`, `t` being the smallest non-negative
 *   integer (decimal) for which the lane's slot — the slot of `emq:{<lane>}:` — lies in the i-th
 *   of k equal slices of the slot space, [⌊i·16384/k⌋, ⌊(i+1)·16384/k⌋).
 *
 * A cluster whose shards own contiguous equal slot ranges (what `valkey-cli --cluster create`
 * gives) therefore holds k/shards lanes per shard. Each lane is a queue name of its own, checked
 * by the queue-name rule; every transition of a lane is single-slot, like any queue's.
 */
import { InvalidArgumentError } from "../errors.js";
import { assertValidQueue, MAX_QUEUE_BYTES, queueKey, slot } from "../keyspace.js";

export const SLOTS = 16384;
/** The most lanes a laned queue has. */
export const MAX_LANES = 256;
/** The longest name of a laned queue: its lanes' suffix (`@k.i.t`) must fit the queue-name rule. */
export const MAX_LANED_NAME_BYTES = MAX_QUEUE_BYTES - 20; // 235

/** The slot slice lane `i` of `k` lands in: [from, to). */
export function sliceOf(i: number, k: number): [from: number, to: number] {
  return [Math.floor((i * SLOTS) / k), Math.floor(((i + 1) * SLOTS) / k)];
}

const cache = new Map<string, readonly string[]>();

/** The physical queue names of `name`'s `k` lanes, lane 0 first. */
export function laneNames(name: string, k: number): readonly string[] {
  assertValidQueue(name);
  if (!Number.isSafeInteger(k) || k < 1 || k > MAX_LANES) {
    throw new InvalidArgumentError("lanes", `must be an integer from 1 to ${MAX_LANES}, got ${String(k)}`);
  }
  if (k === 1) return [name];
  if (Buffer.byteLength(name, "utf8") > MAX_LANED_NAME_BYTES) {
    throw new InvalidArgumentError(
      "name",
      `a laned queue's name is at most ${MAX_LANED_NAME_BYTES} bytes (its lanes add a suffix), got ${Buffer.byteLength(name, "utf8")}`,
    );
  }
  const cacheKey = `${k}\u0000${name}`;
  let names = cache.get(cacheKey);
  if (!names) {
    names = Array.from({ length: k }, (_, i) => laneName(name, k, i));
    cache.set(cacheKey, names);
  }
  return names;
}

/** Lane `i` of `k`: the first `<name>@<k>.<i>.<t>` in its slice. */
function laneName(name: string, k: number, i: number): string {
  const [from, to] = sliceOf(i, k);
  for (let t = 0; ; t++) {
    const lane = `${name}@${k}.${i}.${t}`;
    const s = slot(queueKey(lane, ""));
    if (s >= from && s < to) return lane;
  }
}

/** Which lane of `k` a job with `laneKey` goes to: FNV-1a of the key's UTF-8 bytes, mod k. */
export function laneOfKey(laneKey: string, k: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(laneKey, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % k;
}

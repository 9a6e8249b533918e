/**
 * Branded ids: a 3-byte namespace (`JOB` for jobs) and an 11-character Base62 payload, 14 bytes.
 *
 * Payload = 7 characters of milliseconds since 2024-01-01 (good until the year 2135) followed by
 * 4 characters of a per-process counter. The counter starts at a random value when the process
 * first makes an id and then only counts up, so in one process ids sort in creation order (also
 * within one millisecond), and two processes collide only if their counters run through the
 * same values in the same millisecond. Should that ever happen, `ENQUEUE` refuses the duplicate
 * (`0`) and the host makes a fresh id for ids it generated itself.
 */
import { randomInt } from "node:crypto";
import { InvalidIdError } from "./errors.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const NAMESPACE_LENGTH = 3;
const TIME_CHARS = 7;
const COUNTER_CHARS = 4;
/** The ids' epoch: their time characters count ms since 2024-01-01 UTC. */
export const ID_EPOCH_MS = Date.UTC(2024, 0, 1);
const COUNTER_SPACE = 62 ** COUNTER_CHARS;
const TIME_SPACE = 62 ** TIME_CHARS;
const ID_PATTERN = /^[A-Z]{3}[0-9A-Za-z]{11}$/;
const NAMESPACE_PATTERN = /^[A-Z]{3}$/;

function base62(value: number, width: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62]! + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/**
 * A branded id from its parts: `namespace`, 7 Base62 characters of `ms` (since `ID_EPOCH_MS`)
 * and 4 of `counter` (taken modulo 62⁴). No checks: the callers hold their parts in range.
 */
export function composeId(namespace: string, ms: number, counter: number): string {
  return namespace + base62(ms, TIME_CHARS) + base62(counter % COUNTER_SPACE, COUNTER_CHARS);
}

/** A generator with its own clock state; `newId` uses one per process. */
export class IdGenerator {
  private lastMs = -1;
  private counter: number;
  constructor(
    private readonly now: () => number = Date.now,
    seed: number = randomInt(COUNTER_SPACE),
  ) {
    this.counter = seed;
  }

  next(namespace = "JOB"): string {
    if (!NAMESPACE_PATTERN.test(namespace)) {
      throw new InvalidIdError(namespace, "a namespace is exactly 3 upper-case ASCII letters");
    }
    let ms = Math.max(this.now() - ID_EPOCH_MS, 0);
    this.counter += 1;
    if (this.counter >= COUNTER_SPACE) {
      // Wrapped: move the logical clock past the last millisecond so order still holds.
      this.counter = 0;
      if (ms <= this.lastMs) ms = this.lastMs + 1;
    }
    if (ms < this.lastMs) ms = this.lastMs; // the wall clock went back: keep order
    this.lastMs = ms;
    if (ms >= TIME_SPACE) throw new RangeError("branded id clock overflow (year 2135)");
    return composeId(namespace, ms, this.counter);
  }
}

const processGenerator = new IdGenerator();

/** A new branded id, time-sortable, unique across processes without coordination. */
export function newId(namespace = "JOB"): string {
  return processGenerator.next(namespace);
}

/** All 14 bytes: 3 upper-case letters, 11 Base62 characters. */
export function isValidBrandedId(id: unknown): id is string {
  return typeof id === "string" && ID_PATTERN.test(id);
}

export function assertValidBrandedId(id: unknown): asserts id is string {
  if (!isValidBrandedId(id)) {
    throw new InvalidIdError(id, "a branded id is 3 upper-case letters and 11 Base62 characters (14 bytes)");
  }
}

/** The creation time (ms since the Unix epoch) encoded in an id. */
export function idTime(id: string): number {
  assertValidBrandedId(id);
  let ms = 0;
  for (const ch of id.slice(NAMESPACE_LENGTH, NAMESPACE_LENGTH + TIME_CHARS))
    ms = ms * 62 + BASE62.indexOf(ch);
  return ms + ID_EPOCH_MS;
}

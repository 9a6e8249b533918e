/**
 * A job's own backoff (`AddOptions.backoff`): checked at the add, kept on its row as text
 * (`backoff`: `fixed:<ms>` or `exponential:<ms>:<max ms>:<jitter>`), read back by the worker
 * that fails an attempt of it. Pure.
 */
import { InvalidArgumentError } from "../errors.js";
import { checkKeys, kindOf, type OptionTable } from "../option-keys.js";
import { assertInteger, MAX_INTEGER } from "./common.js";

/** A job's backoff: ms (a fixed delay) or the object form of the Worker's `backoff`. */
export type JobBackoff =
  | number
  | { type: "fixed"; delayMs: number }
  | { type: "exponential"; delayMs: number; maxDelayMs?: number; jitter?: number };

const JOB_BACKOFF: OptionTable = {
  of: "backoff",
  keys: { type: "string", delayMs: "number", maxDelayMs: "number", jitter: "number" },
  foreign: { delay: "delayMs" },
};

/** `backoff` checked (errors name `name`) and encoded as the row keeps it; absent is `""`. */
export function checkJobBackoff(name: string, value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "number")
    return `fixed:${assertInteger(name, value, 0, MAX_INTEGER, " of milliseconds")}`;
  if (typeof value === "function") {
    throw new InvalidArgumentError(
      name,
      "a job's backoff is kept on its row, where a function cannot be: give { type, delayMs } or ms, or set the function as the Worker's backoff",
    );
  }
  if (typeof value !== "object" || value === null) {
    throw new InvalidArgumentError(
      name,
      `must be ms or { type: "fixed" | "exponential", delayMs }, got ${kindOf(value)}`,
    );
  }
  const o = checkKeys(value, JOB_BACKOFF, name, `${name}.`);
  const delay = assertInteger(`${name}.delayMs`, o.delayMs, 0, MAX_INTEGER, " of milliseconds");
  if (o.type === "fixed") {
    if (o.maxDelayMs !== undefined || o.jitter !== undefined)
      throw new InvalidArgumentError(name, "a fixed backoff takes only delayMs");
    return `fixed:${delay}`;
  }
  if (o.type !== "exponential") {
    throw new InvalidArgumentError(
      `${name}.type`,
      `must be "fixed" or "exponential", got ${JSON.stringify(o.type)}`,
    );
  }
  const max = o.maxDelayMs === undefined ? MAX_INTEGER : o.maxDelayMs;
  const cap = assertInteger(`${name}.maxDelayMs`, max, 0, MAX_INTEGER, " of milliseconds");
  const jitter = o.jitter === undefined ? 0 : o.jitter;
  if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1)) {
    throw new InvalidArgumentError(`${name}.jitter`, `must be a number from 0 to 1, got ${String(jitter)}`);
  }
  return `exponential:${delay}:${cap}:${jitter}`;
}

/** A stored backoff, in the object form of the Worker's `backoff` option. */
type StoredBackoff = Exclude<JobBackoff, number>;

/** A row's `backoff` text as the worker's backoff option; `null` when absent or not one. */
export function parseJobBackoff(text: string | undefined): StoredBackoff | null {
  if (!text) return null;
  const [type, ...rest] = text.split(":");
  const n = rest.map(Number);
  if (!n.every((v) => Number.isFinite(v) && v >= 0)) return null;
  if (type === "fixed" && n.length === 1) return { type: "fixed", delayMs: n[0]! };
  if (type === "exponential" && n.length === 3 && n[2]! <= 1)
    return { type: "exponential", delayMs: n[0]!, maxDelayMs: n[1]!, jitter: n[2]! };
  return null;
}

/** A row's backoff as the `JobBackoff` option it came from (the reads show it so). */
export function jobBackoffOf(text: string | undefined): JobBackoff | undefined {
  return parseJobBackoff(text) ?? undefined;
}

/**
 * Retry backoff: how long a failed job waits before its next attempt. Pure functions.
 */
import { InvalidArgumentError } from "./errors.js";
import { MAX_INTEGER } from "./jobs/common.js";
import { checkKeys, type OptionTable } from "./option-keys.js";

const BACKOFF_OPTIONS: OptionTable = {
  of: "backoff",
  keys: { type: "string", delayMs: "number", maxDelayMs: "number", jitter: "number" },
  foreign: { delay: "delayMs" },
};

/** `fixed`: always `delayMs`. `exponential`: `delayMs * 2^(attempt-1)`, capped, with jitter. */
export type BackoffOption =
  | { type: "fixed"; delayMs: number }
  | { type: "exponential"; delayMs: number; maxDelayMs?: number; jitter?: number }
  | ((attempt: number, error: unknown) => number);

export const DEFAULT_BACKOFF: BackoffOption = {
  type: "exponential",
  delayMs: 1000,
  maxDelayMs: 3_600_000,
  jitter: 0.2,
};

/**
 * The delay before the next attempt, after attempt number `attempt` (1-based) failed with `error`.
 * Exponential jitter spreads the delay uniformly over ±`jitter` of itself (0.2 = ±20%).
 */
export function backoffDelay(
  option: BackoffOption,
  attempt: number,
  error: unknown,
  random = Math.random,
): number {
  let ms: number;
  if (typeof option === "function") {
    ms = option(attempt, error);
  } else if (option.type === "fixed") {
    ms = option.delayMs;
  } else {
    const cap = Math.min(option.maxDelayMs ?? MAX_INTEGER, MAX_INTEGER);
    const base = Math.min(option.delayMs * 2 ** Math.max(attempt - 1, 0), cap);
    const jitter = option.jitter ?? 0;
    ms = Math.min(base * (1 - jitter + 2 * jitter * random()), cap);
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(
      "backoff",
      `must give a non-negative number of milliseconds, got ${String(ms)}`,
    );
  }
  return Math.round(ms);
}

export function assertBackoff(option: unknown): asserts option is BackoffOption {
  if (typeof option === "function") return;
  if (typeof option === "object" && option !== null)
    checkKeys(option, BACKOFF_OPTIONS, "backoff", "backoff.");
  const o = option as { type?: unknown; delayMs?: unknown; jitter?: unknown } | null;
  const okDelay = typeof o?.delayMs === "number" && Number.isFinite(o.delayMs) && o.delayMs >= 0;
  const okJitter =
    o?.jitter === undefined || (typeof o.jitter === "number" && o.jitter >= 0 && o.jitter <= 1);
  if (!o || (o.type !== "fixed" && o.type !== "exponential") || !okDelay || !okJitter) {
    throw new InvalidArgumentError(
      "backoff",
      "must be { type: 'fixed' | 'exponential', delayMs >= 0, jitter? in [0, 1] } or a function (attempt, error) => ms",
    );
  }
}

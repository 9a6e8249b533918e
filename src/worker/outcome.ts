/**
 * What the worker stores when a handler returns or throws: the result as bytes, the error as
 * text, the retry delay. Pure functions; a value the protocol cannot carry is reported, never
 * left to lease expiry.
 */
import { type BackoffOption, backoffDelay } from "../backoff.js";
import { InvalidBackoffError, InvalidResultError } from "../errors.js";
import { assertSize, MAX_INTEGER, maxBytes } from "../jobs/common.js";

/**
 * The result as stored: `undefined`/`null` → empty, strings and bytes as they are, anything else
 * as JSON. Throws `InvalidResultError` when JSON cannot carry it (a BigInt, a cycle, a symbol or
 * a function at the top), `TooLargeError` when it is over the `result` bound (the attempt then
 * fails with that error).
 */
export function encodeResult(result: unknown): string | Uint8Array {
  if (result === undefined || result === null) return "";
  if (typeof result === "string" || result instanceof Uint8Array) {
    assertSize("result", result, "result");
    return result;
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new InvalidResultError(reason.replace(/\s+/g, " "), err);
  }
  if (json === undefined) throw new InvalidResultError(`JSON has no form for a ${typeof result}`);
  assertSize("result", json, "result");
  return json;
}

/** An error as the text stored on the job: `Name: message`, or `String(error)`. */
export function errorText(error: unknown): string {
  return fitError(describeError(error));
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/** How many frames of a failure's stack a worker keeps (`at …` lines after the first line). */
const STACK_FRAMES = 20;

/**
 * A failure's stack as a worker stores it (`FAIL`'s `<stack>`): the error's `stack` — its first
 * line and at most {@link STACK_FRAMES} frames, then `… [<n> more frames]` — cut to the protocol's
 * `stack` bound (8 KiB) on a character boundary. An error without a string `stack`: `""` (none).
 */
export function stackText(error: unknown): string {
  const raw = error instanceof Error ? error.stack : undefined;
  if (typeof raw !== "string" || raw === "") return "";
  const lines = raw.split("\n");
  const first = lines.findIndex((l) => /^\s+at /.test(l));
  const head = first < 0 ? lines.length : first;
  const frames = lines.length - head;
  let kept = lines.slice(0, head + STACK_FRAMES);
  if (frames > STACK_FRAMES) kept = [...kept, `    … [${frames - STACK_FRAMES} more frames]`];
  return fitText(kept.join("\n"), maxBytes("stack"));
}

/**
 * An error text cut to the protocol's `error` bound (docs/protocol.md), so a failure is never
 * refused: the start of the text, on a character boundary, then `… [cut: <n> bytes in all]`.
 */
function fitError(text: string): string {
  return fitText(text, maxBytes("error"));
}

/** `text` cut to `max` bytes of UTF-8 on a character boundary, marked `… [cut: <n> bytes in all]`. */
function fitText(text: string, max: number): string {
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  const marker = `… [cut: ${bytes.length} bytes in all]`;
  let keep = max - Buffer.byteLength(marker, "utf8");
  while (keep > 0 && ((bytes[keep] ?? 0) & 0xc0) === 0x80) keep--;
  return bytes.subarray(0, keep).toString("utf8") + marker;
}

/** The retry delay after a failed attempt, or the reason none could be had (then 0 is used). */
export function retryDelay(
  backoff: BackoffOption,
  attempt: number,
  error: unknown,
): { delayMs: number; problem?: InvalidBackoffError } {
  let ms: number;
  try {
    ms = backoffDelay(backoff, attempt, error);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { delayMs: 0, problem: new InvalidBackoffError(`it threw: ${reason}`, MAX_INTEGER, err) };
  }
  if (ms > MAX_INTEGER)
    return { delayMs: 0, problem: new InvalidBackoffError(`it gave ${ms} ms`, MAX_INTEGER) };
  return { delayMs: ms };
}

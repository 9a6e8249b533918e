/** Polling for a condition in tests: the one `until` the suites share. */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `check` every `everyMs` until it holds; after `timeoutMs` fails with
 * `timed out after <ms> ms waiting for <what>`. `what` may be a function, read only on failure,
 * when the message should also say what was seen instead.
 */
export async function until(
  what: string | (() => string),
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      const awaited = typeof what === "string" ? what : what();
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${awaited}`);
    }
    await sleep(everyMs);
  }
}

/**
 * `work`, or a failure naming `what` when it has not settled after `timeoutMs`: a step that
 * hangs fails the test by name instead of the whole file's timeout.
 */
export async function within<T>(what: string, work: Promise<T>, timeoutMs = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

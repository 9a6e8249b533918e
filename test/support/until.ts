/** Polling for a condition in tests: the one `until` the suites share. */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";

/** Polls `check` every `everyMs` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

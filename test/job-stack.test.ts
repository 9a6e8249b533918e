/**
 * The failure's stack, both wires (`FAIL` / `FAILNEXT` `<stack>`): a worker keeps the first 20
 * frames of the error's stack beside its message, `getJob` reads it as `stack`, an error without
 * a stack removes the one an earlier failure left; the host refuses a stack that is not a string
 * or is over 8 KiB, naming it, nothing written.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { claim, fail } from "../src/jobs.js";
import { InvalidArgumentError, Queue, TooLargeError, Worker } from "../src/index.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };

/** An error thrown 30 calls deep: more frames than a worker keeps. */
function deep(n: number): never {
  if (n === 0) throw new Error("deep down");
  return deep(n - 1);
}

forEachWire("the failure's stack", (ctx) => {
  test("a worker keeps the stack beside the error, 20 frames; a failure without one removes it", async () => {
    const q = new Queue("stack-worker", ctx().conn);
    const { id } = await q.add({}, { maxAttempts: 3 });
    const worker = new Worker(
      q,
      (job) => {
        if (job.attempts === 1) deep(30);
        throw "a string has no stack";
      },
      quiet,
    );
    await until("dead", async () => (await q.getJob(id))?.state === "dead" || false);
    await worker.close();
    assert.equal((await q.getJob(id))?.stack, undefined, "the last failure had no stack");
    // The first failure's stack, read while it was kept: run one failure only.
    const { id: one } = await q.add({}, { maxAttempts: 1 });
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 50; // V8 records 10 frames by default
    const w2 = new Worker(q, () => deep(30), quiet);
    try {
      await until("dead", async () => (await q.getJob(one))?.state === "dead" || false);
    } finally {
      Error.stackTraceLimit = limit;
      await w2.close();
    }
    const row = await q.getJob(one);
    assert.equal(row?.error, "Error: deep down");
    const lines = row?.stack?.split("\n") ?? [];
    assert.equal(lines[0], "Error: deep down");
    assert.equal(lines.filter((l) => /^\s+at /.test(l)).length, 20);
    assert.match(lines.at(-1) ?? "", /^ {4}… \[\d+ more frames\]$/);
  });

  test("the host step: a stack kept and removed; a bad or over-bound stack refused by name", async () => {
    const { conn } = ctx();
    const q = new Queue("stack-host", conn);
    const { id } = await q.add("x", { maxAttempts: 5 });
    let job = await claim(conn, "stack-host", 30_000);
    assert.ok(job && "id" in job);
    const opts = { backoffMs: 0, maxAttempts: 5, keep: 10 };
    await fail(conn, "stack-host", id, job.attempts, "e1", {
      ...opts,
      stack: "Error: e1\n    at f (a.js:1:1)",
    });
    assert.equal((await q.getJob(id))?.stack, "Error: e1\n    at f (a.js:1:1)");
    job = await claim(conn, "stack-host", 30_000);
    assert.ok(job && "id" in job);
    await assert.rejects(
      fail(conn, "stack-host", id, job.attempts, "e2", { ...opts, stack: "s".repeat(8193) }),
      (e: unknown) => e instanceof TooLargeError && /stack/.test(e.message),
    );
    await assert.rejects(
      fail(conn, "stack-host", id, job.attempts, "e2", { ...opts, stack: 7 as unknown as string }),
      (e: unknown) => e instanceof InvalidArgumentError && e.argument === "stack",
    );
    assert.equal((await q.getJob(id))?.state, "active", "nothing written");
    await fail(conn, "stack-host", id, job.attempts, "e2", opts);
    const row = await q.getJob(id);
    assert.equal(row?.error, "e2");
    assert.equal(row?.stack, undefined);
  });
});

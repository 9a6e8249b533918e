/**
 * `echomq/bullmq` over the job model's newer parts, both wires: `job.moveToDelayed(ts)` then
 * `throw new DelayedError()` (BullMQ's step-job pattern) leaves the job `delayed`; a failed job's
 * `stacktrace` holds its stack.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DelayedError, type Job, Queue, Worker } from "../src/bullmq.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

forEachWire("bullmq: moveToDelayed and stacktrace", (ctx) => {
  test("moveToDelayed + DelayedError: delayed, not failed; a failure's stacktrace", async () => {
    const q = new Queue("bm-model", { connection: ctx().conn });
    const later = await q.add("snooze", { n: 1 });
    const bad = await q.add("bad", { n: 2 }, { attempts: 1 });
    let failed = 0;
    const w = new Worker(
      "bm-model",
      async (job: Job) => {
        if (job.name === "snooze") {
          await job.moveToDelayed(Date.now() + 600_000);
          throw new DelayedError();
        }
        throw new Error("broken");
      },
      { connection: ctx().conn },
    );
    w.on("failed", () => failed++);
    try {
      await until("the failure", () => failed >= 1);
      await until(
        "delayed",
        async () => (await q.getJob(later.id!))?.getState().then((s) => s === "delayed") ?? false,
      );
      const dead = await q.getJob(bad.id!);
      assert.equal(dead?.failedReason, "broken");
      assert.match(dead?.stacktrace[0] ?? "", /^Error: broken\n\s+at /);
      assert.equal(failed, 1, "the delayed job did not fail");
    } finally {
      await w.close();
      await q.close();
    }
  });
});

/**
 * `echomq/bullmq` over the job model's newer parts, both wires: `job.moveToDelayed(ts)` then
 * `throw new DelayedError()` (BullMQ's step-job pattern) leaves the job `delayed`; a failed job's
 * `stacktrace` holds its stack: the latest attempt's only, one entry, the same on the Worker's
 * `failed` event as on the row; `stackTraceLimit` refused by name, nothing written.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BullMQRefusalError, DelayedError, type Job, Queue, Worker } from "../src/bullmq.js";
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

  test("stacktrace: the latest attempt's stack only, one entry, on the failed event as on the row", async () => {
    const q = new Queue("bm-stack", { connection: ctx().conn });
    const job = await q.add("twice", { n: 1 }, { attempts: 2 });
    const seen: string[][] = [];
    const w = new Worker(
      "bm-stack",
      async (j: Job) => {
        throw new Error(`attempt ${j.attemptsMade + 1}`);
      },
      { connection: ctx().conn },
    );
    w.on("failed", (j) => seen.push([...(j?.stacktrace ?? [])]));
    try {
      await until("both attempts failed", async () => (await q.getJob(job.id!))?.attemptsMade === 2);
      await until("the second failed event", () => seen.length === 2);
      const row = await q.getJob(job.id!);
      assert.equal(row?.failedReason, "attempt 2");
      assert.equal(row?.stacktrace.length, 1, "one entry: the latest attempt's");
      assert.match(row?.stacktrace[0] ?? "", /^Error: attempt 2\n\s+at /);
      assert.deepEqual(
        seen.map((s) => s.map((line) => line.split("\n")[0])),
        [["Error: attempt 1"], ["Error: attempt 2"]],
      );
      assert.deepEqual(seen[1], row?.stacktrace, "the event's stack is the row's");
      const { server } = ctx();
      const before = await server.cli("DBSIZE");
      await assert.rejects(q.add("x", {}, { stackTraceLimit: 5 } as never), (e: unknown) => {
        assert.ok(e instanceof BullMQRefusalError);
        assert.equal(
          e.message,
          "echomq/bullmq does not honour stackTraceLimit (job options): a job keeps its latest failure's stack only (job.stacktrace: one entry, 20 frames, 8 KiB): drop stackTraceLimit",
        );
        return true;
      });
      assert.equal(await server.cli("DBSIZE"), before, "nothing written");
    } finally {
      await w.close();
      await q.close();
    }
  });
});

/**
 * `job.moveToDelayed(timestamp)` and `DelayedError`, both wires (`RESCHEDULE`: reschedule.lua and
 * `EMQ.RESCHEDULE`): the job goes to `scheduled` with its lease released, no error written and its
 * attempt counted; the worker neither completes nor fails it; a due time already past runs it
 * again at once; a bad timestamp is refused by name; `DelayedError` alone fails the attempt.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DelayedError, InvalidArgumentError, Queue, Worker } from "../src/index.js";
import { queueKey } from "../src/keyspace.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };

forEachWire("moveToDelayed", (ctx) => {
  test("moveToDelayed + DelayedError: scheduled at the timestamp, lease released, attempt counted, no failure", async () => {
    const q = new Queue("delayed-move", ctx().conn);
    const { id } = await q.add({ step: 1 }, { maxAttempts: 3 });
    const outcomes: string[] = [];
    let runs = 0;
    const worker = new Worker(
      q,
      async (job) => {
        runs++;
        await job.moveToDelayed(Date.now() + 600_000);
        throw new DelayedError();
      },
      quiet,
    );
    worker.on("completed", () => outcomes.push("completed")).on("failed", () => outcomes.push("failed"));
    await until("the job scheduled", async () => (await q.getJob(id))?.state === "scheduled");
    await worker.close();
    const row = await q.getJob(id);
    assert.equal(runs, 1);
    assert.deepEqual(outcomes, []);
    assert.equal(row?.attempts, 1);
    assert.equal(row?.attemptsMade, 1);
    assert.equal(row?.error, undefined);
    const due = Number(await ctx().server.cli("ZSCORE", queueKey("delayed-move", "schedule"), id));
    assert.ok(due > Date.now() + 500_000, `due ${due}`);
    const counts = (await q.counts()) as { active: number; scheduled: number };
    assert.equal(counts.active, 0);
    assert.equal(counts.scheduled, 1);
  });

  test("a timestamp already past is due now: the job runs again, its second attempt", async () => {
    const q = new Queue("delayed-past", ctx().conn);
    const { id } = await q.add({});
    const seen: number[] = [];
    const worker = new Worker(
      q,
      async (job) => {
        seen.push(job.attempts);
        if (job.attempts === 1) {
          await job.moveToDelayed(Date.now() - 1000);
          throw new DelayedError("not yet");
        }
        return "done";
      },
      quiet,
    );
    await until("completed", async () => (await q.getJob(id))?.state === "completed");
    await worker.close();
    assert.deepEqual(seen, [1, 2]);
    const row = await q.getJob(id);
    assert.equal(row?.attempts, 2);
    assert.equal(row?.error, undefined);
  });

  test("a bad timestamp is refused by name, nothing moved; DelayedError alone fails the attempt", async () => {
    const q = new Queue("delayed-bad", ctx().conn);
    const { id } = await q.add({}, { maxAttempts: 1 });
    const refusals: unknown[] = [];
    const worker = new Worker(
      q,
      async (job) => {
        for (const bad of [-1, 1.5, Number.NaN, "soon" as unknown as number]) {
          await job.moveToDelayed(bad).catch((e: unknown) => refusals.push(e));
        }
        assert.equal((await q.getJob(id))?.state, "active");
        throw new DelayedError();
      },
      quiet,
    );
    await until("dead", async () => (await q.getJob(id))?.state === "dead");
    await worker.close();
    assert.equal(refusals.length, 4);
    for (const e of refusals) {
      assert.ok(e instanceof InvalidArgumentError, String(e));
      assert.equal(e.argument, "timestamp");
      assert.match(e.message, /timestamp.*must be a non-negative integer of ms since the epoch/);
    }
    assert.equal((await q.getJob(id))?.error, "DelayedError: moved to delayed");
  });
});

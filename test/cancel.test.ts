/**
 * `queue.cancel(id)` on both wires (docs/jobs.md, "Cancelling a job"): an active job's handler
 * sees its `signal` abort with `JobCancelledError` and the job is dead with the error `cancelled`,
 * no retry, the bus's `failed` seen; pending and scheduled jobs are dead at once; finished jobs
 * are left (`cancelled: false`); an unknown id is a typed refusal naming it; a handler that
 * ignores its signal and returns anyway does not complete the job. The frozen worker and the
 * cluster have their own files (cancel.frozen, cancel.cluster).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type BusEvent,
  JobCancelledError,
  JobNotFoundError,
  Queue,
  QueueEvents,
  Worker,
} from "../src/index.js";
import { InvalidIdError } from "../src/errors.js";
import { awaitsSignal, outcomes } from "./support/cancel.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const LEASE = { leaseMs: 900, idleCheckMs: 200, promoteEveryMs: 50, reapEveryMs: 100 };

forEachWire("queue.cancel", (ctx) => {
  test("an active job: the handler's signal aborts with JobCancelledError; dead with error cancelled, no retry; the bus's failed seen", async () => {
    const { conn } = ctx();
    const q = new Queue("cancel-active", conn);
    const events = new QueueEvents("cancel-active", conn);
    const bus: BusEvent[] = [];
    events.on("event", (e) => bus.push(e));
    await events.ready;
    const { seen, handler } = awaitsSignal();
    const worker = new Worker(q, handler, { concurrency: 1, ...LEASE });
    const got = outcomes(worker);
    const job = await q.add({ n: 1 }, { maxAttempts: 5 });
    await until("the handler's start", () => seen.started.length === 1);
    assert.deepEqual(await q.cancel(job.id), { cancelled: true, state: "active" });
    const row = (await q.getJob(job.id))!;
    assert.equal(row.state, "dead");
    assert.equal(row.error, "cancelled");
    assert.equal(row.attempts, 1);
    await until("the worker's cancelled event", () => (got.cancelled ?? []).length === 1, 30_000);
    const reason = seen.reasons[0];
    assert.ok(reason instanceof JobCancelledError, `the signal's reason: ${String(reason)}`);
    assert.equal(reason.jobId, job.id);
    assert.match(reason.message, /was cancelled while it ran/);
    assert.ok(got.cancelled![0] instanceof JobCancelledError);
    await until("the cancel's failed and dead on the bus", () => bus.some((e) => e.kind === "dead"));
    const mine = bus.filter((e) => e.jobId === job.id).map((e) => [e.kind, e.reason]);
    assert.deepEqual(mine, [
      ["added", undefined],
      ["active", undefined],
      ["failed", "cancelled"],
      ["dead", "cancelled"],
    ]);
    // The worker runs on: a next job completes; the cancelled one is never retried.
    const next = await q.add("next");
    await until("the handler's second start", () => seen.started.length === 2);
    assert.deepEqual(await q.cancel(next.id), { cancelled: true, state: "active" });
    await until("the second cancelled event", () => (got.cancelled ?? []).length === 2, 30_000);
    await worker.close();
    await events.close();
    assert.deepEqual(
      seen.started.map((j) => j.id),
      [job.id, next.id],
    );
    assert.equal(got.completed, undefined);
    assert.equal(got.failed, undefined, "the handler's rejection is not reported as a failure");
    assert.equal(got.retrying, undefined);
    assert.equal(got.leaseLost, undefined, "reported as cancelled, not as a lost lease");
    const counts = await q.counts();
    assert.equal(counts.dead, 2);
    assert.equal(counts.pending + counts.scheduled + counts.active, 0);
  });

  test("pending and scheduled jobs are dead at once; nothing is claimed after", async () => {
    const { conn } = ctx();
    const q = new Queue("cancel-waiting", conn);
    const pending = await q.add("p");
    const scheduled = await q.add("s", { delay: 60_000 });
    assert.deepEqual(await q.cancel(pending.id), { cancelled: true, state: "pending" });
    assert.deepEqual(await q.cancel(scheduled.id), { cancelled: true, state: "scheduled" });
    for (const id of [pending.id, scheduled.id]) {
      const row = (await q.getJob(id))!;
      assert.equal(row.state, "dead");
      assert.equal(row.error, "cancelled");
    }
    const counts = await q.counts();
    assert.deepEqual([counts.pending, counts.scheduled, counts.dead], [0, 0, 2]);
    const ran: string[] = [];
    const worker = new Worker(q, (job) => void ran.push(job.id), { concurrency: 1, ...LEASE });
    const after = await q.add("after");
    await until("the job added after", async () => (await q.getJob(after.id))?.state === "completed");
    await worker.close();
    assert.deepEqual(ran, [after.id]);
  });

  test("finished jobs are left: completed and dead answer cancelled false; a second cancel answers dead", async () => {
    const { conn } = ctx();
    const q = new Queue("cancel-finished", conn);
    const worker = new Worker(
      q,
      (job) => {
        if (job.text() === "bad") throw new Error("boom");
        return "done";
      },
      { concurrency: 1, attempts: 1, ...LEASE },
    );
    const ok = await q.add("ok");
    const bad = await q.add("bad");
    await until("both finished", async () => (await q.getJob(bad.id))?.state === "dead");
    await until("the completion", async () => (await q.getJob(ok.id))?.state === "completed");
    await worker.close();
    assert.deepEqual(await q.cancel(ok.id), { cancelled: false, state: "completed" });
    assert.deepEqual(await q.cancel(bad.id), { cancelled: false, state: "dead" });
    assert.equal((await q.getJob(bad.id))!.error, "Error: boom", "a dead job's error is kept");
    const later = await q.add("later", { delay: 60_000 });
    assert.deepEqual(await q.cancel(later.id), { cancelled: true, state: "scheduled" });
    assert.deepEqual(await q.cancel(later.id), { cancelled: false, state: "dead" });
  });

  test("an unknown id is JobNotFoundError naming it and the queue; a malformed id is InvalidIdError", async () => {
    const { conn } = ctx();
    const q = new Queue("cancel-unknown", conn);
    const id = "JOB00000000042";
    await assert.rejects(q.cancel(id), (err: unknown) => {
      assert.ok(err instanceof JobNotFoundError);
      assert.equal(err.message, `cancel(${id}): no job ${id} in queue "cancel-unknown"`);
      assert.equal(err.reply, "ERR EMQ.CANCEL job not found");
      return true;
    });
    await assert.rejects(q.cancel("order-42"), InvalidIdError);
    assert.deepEqual(await conn.send("KEYS", ["*cancel-unknown*"]), []);
  });

  test("a handler that ignores its signal and returns anyway: the cancel wins, the result is not recorded", async () => {
    const { conn } = ctx();
    const q = new Queue("cancel-ignored", conn);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started: string[] = [];
    const worker = new Worker(
      q,
      async (job) => {
        started.push(job.id);
        await held; // the signal is never read
        return "finished anyway";
      },
      { concurrency: 1, ...LEASE },
    );
    const got = outcomes(worker);
    const job = await q.add("x");
    await until("the handler's start", () => started.length === 1);
    assert.deepEqual(await q.cancel(job.id), { cancelled: true, state: "active" });
    release(); // returns at once: the completion reaches the server before the next heartbeat
    await until("the worker's cancelled event", () => (got.cancelled ?? []).length === 1, 30_000);
    await worker.close();
    assert.ok(got.cancelled![0] instanceof JobCancelledError);
    assert.equal(got.completed, undefined);
    const row = (await q.getJob(job.id))!;
    assert.equal(row.state, "dead");
    assert.equal(row.error, "cancelled");
    assert.equal(row.result, undefined);
  });
});

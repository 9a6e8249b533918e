import assert from "node:assert/strict";
import { test } from "node:test";
import {
  InvalidArgumentError,
  type Job,
  JobNotFoundError,
  Queue,
  ServerError,
  Worker,
  type WorkerOptions,
} from "../src/index.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";

const FAST: WorkerOptions = { promoteEveryMs: 50, reapEveryMs: 100, idleCheckMs: 200 };

forEachWire("Queue and Worker", (ctx) => {
  test("a worker runs every job once and stores each result; events say completed", async () => {
    const q = new Queue("w1", ctx().conn);
    const { id } = await q.add(JSON.stringify({ a: 1 }));
    const rest = await q.addBulk(Array.from({ length: 49 }, (_, i) => ({ payload: `p${i}` })));
    const seen = new Map<string, number>();
    const worker = new Worker(
      q,
      (job: Job) => {
        seen.set(job.id, (seen.get(job.id) ?? 0) + 1);
        return job.id === id ? job.json() : job.text().toUpperCase();
      },
      { ...FAST, concurrency: 5 },
    );
    const completed: string[] = [];
    worker.on("completed", (job) => completed.push(job.id));
    await until("50 completions", () => completed.length === 50, 10_000);
    await worker.close();
    assert.equal(seen.size, 50);
    assert.ok([...seen.values()].every((n) => n === 1));
    const info = await q.getJob(id);
    assert.equal(info?.state, "completed");
    assert.equal(info?.result?.toString(), JSON.stringify({ a: 1 }));
    assert.equal((await q.getJob(rest[3]!.id))?.result?.toString(), "P3");
    assert.deepEqual(await q.counts(), {
      pending: 0,
      scheduled: 0,
      active: 0,
      completed: 50,
      dead: 0,
      waiting: 0,
      paused: false,
    });
  });

  test("a failing job is retried after its backoff, then dead with its error; events in order", async () => {
    const q = new Queue("w2", ctx().conn);
    const { id } = await q.add("x");
    const events: string[] = [];
    const worker = new Worker(
      q,
      (job) => {
        throw new Error(`attempt ${job.attempts} failed`);
      },
      { ...FAST, attempts: 3, backoff: { type: "fixed", delayMs: 30 } },
    );
    worker.on("failed", (job) => events.push(`failed ${job.attempts}`));
    worker.on("retrying", (job, _e, state) => events.push(`retrying ${job.attempts} ${state}`));
    worker.on("dead", (job) => events.push(`dead ${job.attempts}`));
    await until("the job to die", () => events.includes("dead 3"), 10_000);
    await worker.close();
    assert.deepEqual(events, [
      "failed 1",
      "retrying 1 scheduled",
      "failed 2",
      "retrying 2 scheduled",
      "failed 3",
      "dead 3",
    ]);
    const info = await q.getJob(id);
    assert.equal(info?.state, "dead");
    assert.equal(info?.attempts, 3);
    assert.equal(info?.error, "Error: attempt 3 failed");
    // retry: dead → pending with one more attempt, then it runs again
    await q.retry(id);
    assert.equal((await q.getJob(id))?.state, "pending");
    assert.equal((await q.getJob(id))?.maxAttempts, 4);
    const again = new Worker(q, () => "ok", FAST);
    await until("the retried job", async () => (await q.getJob(id))?.state === "completed", 5000);
    await again.close();
    assert.equal((await q.getJob(id))?.attempts, 4);
  });

  test("the lease is renewed while a handler runs past it: no reap, no second run", async () => {
    const q = new Queue("w3", ctx().conn);
    await q.add("slow");
    let runs = 0;
    const stalled: string[] = [];
    const worker = new Worker(
      q,
      async () => {
        runs += 1;
        await new Promise((r) => setTimeout(r, 700));
        return "done";
      },
      { ...FAST, leaseMs: 200, reapEveryMs: 50 },
    );
    worker.on("stalled", (requeued, dead) => stalled.push(...requeued, ...dead));
    let done = false;
    worker.on("completed", () => {
      done = true;
    });
    await until("the slow job", () => done, 5000);
    await worker.close();
    assert.equal(runs, 1);
    assert.deepEqual(stalled, []);
  });

  test("priority orders the ready jobs; delayed jobs wait for their due time", async () => {
    const q = new Queue("w4", ctx().conn);
    const order: string[] = [];
    await q.add("low", { priority: 10 });
    await q.add("high", { priority: -5 });
    await q.add("normal");
    await q.add("later", { delay: 300 });
    assert.equal((await q.counts()).scheduled, 1);
    const t0 = Date.now();
    let laterAt = 0;
    const worker = new Worker(
      q,
      (job) => {
        order.push(job.text());
        if (job.text() === "later") laterAt = Date.now();
      },
      FAST,
    );
    await until("four jobs", () => order.length === 4, 5000);
    await worker.close();
    assert.deepEqual(order, ["high", "normal", "low", "later"]);
    assert.ok(laterAt - t0 >= 250, `the delayed job ran after its delay (${laterAt - t0} ms)`);
  });

  test("pause stops claims; resume wakes the worker", async () => {
    const q = new Queue("w5", ctx().conn);
    assert.equal(await q.pause(), true);
    assert.equal(await q.pause(), false);
    await q.add("x");
    let ran = 0;
    const worker = new Worker(
      q,
      () => {
        ran += 1;
      },
      { ...FAST, idleCheckMs: 60_000 },
    );
    await worker.ready;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(ran, 0);
    assert.equal((await q.counts()).paused, true);
    assert.equal(await q.resume(), true);
    await until("the job after resume (woken by the wake channel)", () => ran === 1, 3000);
    await worker.close();
  });

  test("remove deletes a job that is not active; an unknown id says false", async () => {
    const q = new Queue("w6", ctx().conn);
    const { id } = await q.add("x");
    assert.equal(await q.remove(id), true);
    assert.equal(await q.getJob(id), null);
    assert.equal(await q.remove(id), false);
    assert.equal((await q.counts()).pending, 0);
    await assert.rejects(q.retry(id), JobNotFoundError);
  });

  test("bad options are typed errors before anything runs", async () => {
    const q = new Queue("w7", ctx().conn);
    const bad: WorkerOptions[] = [
      { concurrency: 0 },
      { concurrency: 1.5 },
      { leaseMs: -1 },
      { attempts: 0 },
      { keepCompleted: -1 },
      { backoff: { type: "nope" } as never },
    ];
    for (const opts of bad)
      assert.throws(() => new Worker(q, () => {}, opts), InvalidArgumentError, JSON.stringify(opts));
    assert.throws(() => new Worker(q, "x" as never), InvalidArgumentError);
    assert.throws(() => new Queue("a{b", ctx().conn));
    await assert.rejects(q.add("x", { priority: 1.5 }), InvalidArgumentError);
    await assert.rejects(q.add("x", { delay: -1 }), InvalidArgumentError);
    await assert.rejects(q.getJob("nope"));
  });

  test("close() with nothing running returns promptly and stops the timers", async () => {
    const q = new Queue("w8", ctx().conn);
    const worker = new Worker(q, () => {}, FAST);
    await worker.ready;
    const t0 = Date.now();
    await worker.close();
    assert.ok(Date.now() - t0 < 1000);
    await q.add("after close");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await q.counts()).pending, 1, "a closed worker claims nothing");
  });

  test("a server refusal surfaces as ServerError with the protocol text", async () => {
    const { server, conn } = ctx();
    await server.cli("SET", "emq:{w9}:pending", "not a zset");
    const q = new Queue("w9", conn);
    await assert.rejects(
      q.add("x"),
      (e: unknown) =>
        e instanceof ServerError &&
        e.message === "WRONGTYPE Operation against a key holding the wrong kind of value",
    );
  });
});

/**
 * BullMQ's documented behaviours (its guide's examples: add and process, retries with backoff,
 * delayed, priority, job schedulers, the limiter, flows, progress, events, graceful close) restated
 * in our words against `echomq/bullmq`, on both wires. Each test is one behaviour.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Redis as IOValkey } from "iovalkey";
import { FlowProducer, type Job, Queue, QueueEvents, Worker } from "../src/bullmq.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const deferred = <T = void>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

forEachWire("bullmq: ported behaviour", (ctx) => {
  const open: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(o: T): T => {
    open.push(o);
    return o;
  };
  const queue = (name = "q") => track(new Queue(name, { connection: ctx().conn }));
  const worker = (name: string, f: (job: Job) => unknown, opts: Record<string, unknown> = {}) =>
    track(new Worker(name, async (job) => f(job), { connection: ctx().conn, ...opts }));
  const closeAll = async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  };

  test("a job added with a name and data reaches the processor as such; its return value is kept", async (t) => {
    t.after(closeAll);
    const q = queue();
    const added = await q.add("paint", { color: "red" });
    assert.equal(added.name, "paint");
    const seen = deferred<Job>();
    const w = worker("q", (job) => {
      seen.resolve(job);
      return { painted: job.data.color };
    });
    const done = new Promise<unknown>((r) => w.on("completed", (_job, value) => r(value)));
    const job = await seen.promise;
    assert.deepEqual([job.id, job.name, job.data], [added.id, "paint", { color: "red" }]);
    assert.deepEqual(await done, { painted: "red" });
    const row = await q.getJob(added.id);
    assert.deepEqual(row?.returnvalue, { painted: "red" });
    assert.equal(await row?.getState(), "completed");
    assert.deepEqual(await q.getJobCounts("wait", "active", "completed", "failed"), {
      wait: 0,
      active: 0,
      completed: 1,
      failed: 0,
    });
  });

  test("without attempts a job runs once: its failure is final (failed, with its reason)", async (t) => {
    t.after(closeAll);
    const q = queue();
    const added = await q.add("once", {});
    let runs = 0;
    const w = worker("q", () => {
      runs++;
      throw new Error("boom");
    });
    const failed = new Promise<Error>((r) => w.on("failed", (_job, err) => r(err)));
    assert.equal((await failed).message, "boom");
    await until("the job failed", async () => (await q.getFailedCount()) === 1);
    assert.equal(runs, 1);
    const [listed] = await q.getFailed();
    assert.equal(listed?.id, added.id);
    assert.equal(listed?.failedReason, "boom");
    assert.equal(listed?.attemptsMade, 1);
    assert.ok((listed?.finishedOn ?? 0) >= listed!.timestamp);
  });

  test("attempts with an exponential backoff: retried after growing delays, then completed", async (t) => {
    t.after(closeAll);
    const q = queue();
    const added = await q.add("flaky", {}, { attempts: 3, backoff: { type: "exponential", delay: 20 } });
    const starts: number[] = [];
    const w = worker(
      "q",
      (job) => {
        starts.push(Date.now());
        if (job.attemptsMade < 2) throw new Error(`try ${job.attemptsMade}`);
        return "ok";
      },
      {},
    );
    const failures: string[] = [];
    w.on("failed", (_job, err) => failures.push(err.message));
    const completed = new Promise<Job>((r) => w.on("completed", (job) => r(job)));
    const job = await completed;
    assert.deepEqual(failures, ["try 0", "try 1"]);
    assert.equal(job.id, added.id);
    assert.equal(job.attemptsMade, 3);
    assert.equal(starts.length, 3);
    assert.ok(starts[2]! - starts[1]! >= 40 && starts[1]! - starts[0]! >= 20, `gaps ${starts}`);
  });

  test("a delayed job waits in delayed, then runs", async (t) => {
    t.after(closeAll);
    const q = queue();
    const added = await q.add("later", { n: 1 }, { delay: 300 });
    assert.equal(await added.getState(), "delayed");
    assert.deepEqual(
      (await q.getDelayed()).map((j) => j.id),
      [added.id],
    );
    const done = deferred<number>();
    worker("q", () => done.resolve(Date.now()));
    assert.ok((await done.promise) >= added.timestamp + 300);
  });

  test("priority: jobs without one first, then the lowest priority number", async (t) => {
    t.after(closeAll);
    const q = queue();
    await q.pause();
    for (const [name, priority] of [
      ["three", 3],
      ["one", 1],
      ["none", undefined],
      ["two", 2],
    ] as const)
      await q.add(name, {}, priority === undefined ? {} : { priority });
    assert.deepEqual(await q.getJobCounts("wait", "prioritized"), { wait: 1, prioritized: 3 });
    const order: string[] = [];
    worker("q", (job) => {
      order.push(job.name);
    });
    await q.resume();
    await until("four jobs ran", () => order.length === 4);
    assert.deepEqual(order, ["none", "one", "two", "three"]);
  });

  test("upsertJobScheduler adds a job from its template at each instant, up to its limit", async (t) => {
    t.after(closeAll);
    const q = queue();
    await q.upsertJobScheduler("tick", { every: 100, limit: 3 }, { name: "tick-job", data: { k: 1 } });
    assert.deepEqual(
      (await q.getJobSchedulers()).map((s) => [s.key, s.every, s.name]),
      [["tick", 100, "tick-job"]],
    );
    const seen: Job[] = [];
    worker("q", (job) => {
      seen.push(job);
    });
    await until("three jobs ran", () => seen.length === 3, 10_000);
    assert.deepEqual(
      seen.map((j) => [j.name, j.data]),
      Array(3).fill(["tick-job", { k: 1 }]),
    );
    await until("the scheduler ended at its limit", async () => (await q.getJobSchedulers()).length === 0);
    assert.equal(await q.removeJobScheduler("tick"), false);
  });

  test("add with repeat makes a scheduler named after the job and its pattern", async (t) => {
    t.after(closeAll);
    const q = queue();
    assert.equal(await q.add("report", { r: 1 }, { repeat: { pattern: "0 3 * * *" } }), undefined);
    const [s] = await q.getRepeatableJobs();
    assert.deepEqual([s?.key, s?.pattern, s?.name], ["repeat:report:0 3 * * *", "0 3 * * *", "report"]);
    assert.equal(await q.removeRepeatable("report", { pattern: "0 3 * * *" }), true);
    assert.deepEqual(await q.getJobSchedulers(), []);
  });

  test("the limiter bounds the jobs started per duration, for the whole queue", async (t) => {
    t.after(closeAll);
    const q = queue();
    await q.addBulk([1, 2, 3].map((n) => ({ name: "limited", data: { n } })));
    const starts: number[] = [];
    worker(
      "q",
      () => {
        starts.push(Date.now());
      },
      { concurrency: 3, limiter: { max: 2, duration: 1000 } },
    );
    await until("three jobs ran", () => starts.length === 3, 10_000);
    assert.deepEqual((await (await q.core()).limits()).rate, { max: 2, durationMs: 1000 });
    assert.ok(
      starts[2]! - starts[0]! >= 500,
      `the third started ${starts[2]! - starts[0]!} ms after the first`,
    );
  });

  test("a flow's parent waits for its children, then reads their results", async (t) => {
    t.after(closeAll);
    const flows = track(new FlowProducer({ connection: ctx().conn }));
    const node = await flows.add({
      name: "assemble",
      queueName: "parents",
      data: { car: 1 },
      children: [
        { name: "wheel", queueName: "parts", data: { n: 1 } },
        { name: "wheel", queueName: "parts", data: { n: 2 } },
      ],
    });
    const parents = queue("parents");
    assert.equal(await (await parents.getJob(node.job.id))?.getState(), "waiting-children");
    worker("parts", (job) => job.data.n * 10);
    const values = deferred<Record<string, unknown>>();
    worker("parents", async (job) => values.resolve(await job.getChildrenValues()));
    const got = await values.promise;
    assert.deepEqual(Object.values(got).sort(), [10, 20]);
    assert.deepEqual(Object.keys(got).sort(), node.children!.map((c) => `parts:${c.job.id}`).sort());
  });

  test("progress reaches the worker's and the queue's listeners, and the job keeps the latest", async (t) => {
    t.after(closeAll);
    const q = queue();
    const events = track(new QueueEvents("q", { connection: ctx().conn }));
    await events.waitUntilReady();
    const onBus: unknown[] = [];
    events.on("progress", ({ data }) => onBus.push(data));
    const added = await q.add("p", {});
    const onWorker: unknown[] = [];
    const w = worker("q", async (job) => {
      await job.updateProgress(50);
      await job.updateProgress({ step: "done" });
    });
    w.on("progress", (_job, p) => onWorker.push(p));
    await until("two progress events on the bus", () => onBus.length === 2);
    assert.deepEqual(onWorker, [50, { step: "done" }]);
    assert.deepEqual(onBus, [50, { step: "done" }]);
    assert.deepEqual((await q.getJob(added.id))?.progress, { step: "done" });
  });

  test("QueueEvents: waiting, active, completed with the return value, failed with the reason", async (t) => {
    t.after(closeAll);
    const q = queue();
    const events = track(new QueueEvents("q", { connection: ctx().conn }));
    await events.waitUntilReady();
    const seen: string[] = [];
    for (const name of ["added", "waiting", "active", "completed", "failed"] as const)
      events.on(name, (e: { jobId: string; returnvalue?: unknown; failedReason?: string }) =>
        seen.push(`${name}:${e.returnvalue ?? e.failedReason ?? ""}`),
      );
    const ok = await q.add("ok", {});
    const bad = await q.add("bad", {});
    worker("q", (job) => {
      if (job.name === "bad") throw new Error("nope");
      return 7;
    });
    assert.equal(await ok.waitUntilFinished(events), 7);
    await assert.rejects(bad.waitUntilFinished(events), { message: "nope" });
    await until("the failure on the bus", () => seen.includes("failed:nope"));
    assert.deepEqual(
      seen.filter((s) => s.startsWith("completed") || s.startsWith("failed")),
      ["completed:7", "failed:nope"],
    );
    assert.deepEqual(seen.filter((s) => s.startsWith("added")).length, 2);
    assert.deepEqual(seen.filter((s) => s.startsWith("active")).length, 2);
  });

  test("close() waits for the running job to finish (graceful shutdown)", async (t) => {
    t.after(closeAll);
    const q = queue();
    const added = await q.add("slow", {});
    const started = deferred();
    const release = deferred();
    const w = new Worker(
      "q",
      async () => {
        started.resolve();
        await release.promise;
        return "finished";
      },
      { connection: ctx().conn },
    );
    await started.promise;
    const closed = w.close();
    release.resolve();
    await closed;
    assert.equal(w.isRunning(), false);
    assert.equal(await (await q.getJob(added.id))?.getState(), "completed");
  });

  test("a jobId is an idempotency key: the second add returns the first job; getJob finds it by it", async (t) => {
    t.after(closeAll);
    const q = queue();
    const first = await q.add("order", { n: 1 }, { jobId: "order-42" });
    const second = await q.add("order", { n: 2 }, { jobId: "order-42" });
    assert.equal(second.id, first.id);
    assert.equal(await q.getWaitingCount(), 1);
    assert.deepEqual((await q.getJob("order-42"))?.data, { n: 1 });
  });

  test("autorun: false runs nothing until run(); defaultJobOptions apply under each add's", async (t) => {
    t.after(closeAll);
    const q = track(
      new Queue("q", { connection: ctx().conn, defaultJobOptions: { attempts: 2, priority: 5 } }),
    );
    const added = await q.add("d", {}, { priority: 1 });
    assert.deepEqual([added.opts.attempts, added.opts.priority], [2, 1]);
    let runs = 0;
    const w = worker(
      "q",
      () => {
        runs++;
        if (runs === 1) throw new Error("first");
      },
      { autorun: false },
    );
    assert.equal(w.isRunning(), false);
    const running = w.run();
    await until("two runs (attempts from the defaults)", () => runs === 2);
    await until("completed", async () => (await q.getCompletedCount()) === 1);
    await w.close();
    await running;
  });

  test("the operator calls: getJobs by state, remove, clean, drain, obliterate, pause", async (t) => {
    t.after(closeAll);
    const q = queue();
    const jobs = await q.addBulk([1, 2, 3].map((n) => ({ name: "j", data: { n } })));
    await q.add("d", {}, { delay: 60_000 });
    assert.deepEqual(
      (await q.getJobs(["wait"], 0, -1, true)).map((j) => j.data.n),
      [1, 2, 3],
    );
    assert.deepEqual(
      (await q.getJobs("wait", 0, 0)).map((j) => j.data.n),
      [3],
    );
    assert.equal(await q.count(), 4);
    assert.equal(await q.remove(jobs[0]!.id), 1);
    assert.equal(await q.remove(jobs[0]!.id), 0);
    await q.drain();
    assert.deepEqual(await q.getJobCounts("wait", "delayed"), { wait: 0, delayed: 1 });
    await q.drain(true);
    assert.equal(await q.getDelayedCount(), 0);
    await q.addBulk([1, 2].map((n) => ({ name: "c", data: { n } })));
    worker("q", () => "x");
    await until("two completed", async () => (await q.getCompletedCount()) === 2);
    assert.equal((await q.clean(0, 1, "completed")).length, 1);
    assert.equal(await q.getCompletedCount(), 1);
    await q.pause();
    assert.equal(await q.isPaused(), true);
    await q.resume();
    assert.equal(await q.isPaused(), false);
    await closeAll();
    const again = queue();
    await again.obliterate();
    assert.deepEqual(await again.getJobCounts("completed", "wait"), { completed: 0, wait: 0 });
  });

  test("connection as BullMQ passes it: { host, port } (and EchoMQ's wire), a URL, a client: each opens its own", async (t) => {
    t.after(closeAll);
    const { server, wire } = ctx();
    const q = track(
      new Queue("own", {
        connection: { host: "127.0.0.1", port: server.port, wire, maxRetriesPerRequest: null },
      }),
    );
    const job = await q.add("x", { a: 1 });
    assert.deepEqual((await q.getJob(job.id))?.data, { a: 1 });
    if (wire !== 4) return; // a URL and a client carry no wire: they connect on wire 4
    const client = new IOValkey({ port: server.port, lazyConnect: true });
    for (const connection of [`redis://127.0.0.1:${server.port}`, client]) {
      const other = track(new Queue("own", { connection }));
      assert.deepEqual((await other.getJob(job.id))?.data, { a: 1 });
    }
    assert.equal(client.status, "wait", "the client's own socket is never opened");
  });

  test("the Worker's removeOnComplete, active and drained events; the Job's state questions", async (t) => {
    t.after(closeAll);
    const q = queue();
    const [first] = await q.addBulk([1, 2].map((n) => ({ name: "r", data: { n } })));
    assert.equal(await first!.isWaiting(), true);
    const active: string[] = [];
    const w = worker("q", () => "r", { removeOnComplete: true, concurrency: 2 });
    w.on("active", (job, prev) => active.push(`${job.name}:${prev}`));
    const drained = new Promise<void>((r) => w.on("drained", () => r()));
    await drained;
    assert.deepEqual(active, ["r:waiting", "r:waiting"]);
    assert.equal(await q.getJobCountByTypes("completed", "wait", "active"), 0);
    assert.equal(await first!.getState(), "unknown");
    assert.equal(await first!.isCompleted(), false);
  });

  test("QueueEvents: added and delayed with its due time, removed, paused and resumed, waiting-children, cleaned", async (t) => {
    t.after(closeAll);
    const q = queue();
    const events = track(new QueueEvents("q", { connection: ctx().conn }));
    await events.waitUntilReady();
    const seen: string[] = [];
    let dueAt = 0;
    events.on("delayed", ({ delay }) => {
      dueAt = delay;
      seen.push("delayed");
    });
    for (const name of ["added", "removed", "paused", "resumed", "waiting-children", "cleaned"] as const)
      events.on(name, () => seen.push(name));
    const later = await q.add("later", {}, { delay: 60_000 });
    await q.remove(later.id);
    await q.pause();
    await q.resume();
    const flows = track(new FlowProducer({ connection: ctx().conn }));
    const node = await flows.add({ name: "p", queueName: "q", children: [{ name: "c", queueName: "kids" }] });
    assert.equal(await node.job.isWaitingChildren(), true);
    assert.deepEqual(
      (await q.getWaitingChildren()).map((j) => j.id),
      [node.job.id],
    );
    await until("seven events", () => seen.length === 7);
    assert.deepEqual(seen, ["added", "delayed", "removed", "paused", "resumed", "added", "waiting-children"]);
    assert.ok(dueAt >= later.timestamp + 60_000, `due at ${dueAt}, added at ${later.timestamp}`);
  });

  test("a processor file runs each job in a worker thread: result, progress, log, updateData and failure come back", async (t) => {
    t.after(closeAll);
    const q = queue();
    const ok = await q.add("double", { n: 21 });
    const bad = await q.add("double", { fail: true });
    const file = new URL("./fixtures/bullmq-processor.mjs", import.meta.url);
    const w = track(new Worker("q", file, { connection: ctx().conn, concurrency: 2 }));
    const progress: unknown[] = [];
    w.on("progress", (_job, p) => progress.push(p));
    const failed = new Promise<Error>((r) => w.on("failed", (_job, err) => r(err)));
    const err = await failed;
    assert.deepEqual([err.name, err.message], ["TypeError", "sandboxed failure"]);
    await until("the first job completed", async () => (await ok.getState()) === "completed");
    assert.deepEqual((await q.getJob(ok.id))?.returnvalue, { doubled: 42, inThread: true });
    assert.deepEqual((await q.getJob(ok.id))?.data, { n: 21, seen: true });
    assert.equal((await q.getJob(bad.id))?.failedReason, "sandboxed failure");
    assert.deepEqual((await (await q.core()).getJob(ok.id))?.logs, ["hello double"]);
    assert.deepEqual(progress, [42, 42]);
    assert.throws(() => new Worker("q", "./no-such-processor.js", { connection: ctx().conn }), {
      name: "InvalidArgumentError",
      message: /invalid processor: is a file that does not exist: .*no-such-processor\.js/,
    });
  });
});

/**
 * The job model, both wires: a job's data through the queue's serializer (`json` by default,
 * `raw`, your own) and `job.data` in the handler; a job's `name` and own `backoff` kept on its row
 * and shown by `getJob`; the worker failing an attempt with the job's own backoff, else its own;
 * `UnrecoverableError` failing a job straight to `dead`; `waitUntilFinished` resolving with the
 * result or rejecting with the failure (and when the job had finished before it was asked); the
 * handler's `processedOn` / `attemptsMade` and a finished row's `finishedOn` / `attemptsMade`;
 * `updateData` from the queue and from the handler, on any job, with no lease token.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  InvalidArgumentError,
  InvalidDataError,
  type Job,
  JobFailedError,
  JobNotFoundError,
  Queue,
  QueueEvents,
  UnrecoverableError,
  WaitUntilFinishedError,
  Worker,
} from "../src/index.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };

/** Runs `handler` on `q` until `settled` jobs have finished an attempt; the jobs the handler saw. */
async function runJobs(q: Queue, handler: (job: Job) => unknown, settled: number, opts = {}): Promise<Job[]> {
  const seen: Job[] = [];
  let n = 0;
  const worker = new Worker(
    q,
    (job) => {
      seen.push(job);
      return handler(job);
    },
    { ...quiet, ...opts },
  );
  worker.on("completed", () => n++).on("failed", () => n++);
  try {
    await until(`${settled} settled jobs`, () => n >= settled);
  } finally {
    await worker.close();
  }
  return seen;
}

forEachWire("the job model", (ctx) => {
  test("json data round-trips; a string is stored as it is; job.data of one that is not JSON is refused", async () => {
    const q = new Queue("model-json", ctx().conn);
    const value = { order: 42, items: ["a", "é"], paid: true };
    const a = await q.add(value, { name: "charge" });
    const b = await q.add(JSON.stringify({ legacy: 1 }));
    const c = await q.add("plain text");
    const d = await q.add([1, null]);
    assert.equal((await q.getJob(a.id))?.payload.toString(), JSON.stringify(value));
    const read = new Map<string, unknown>();
    await runJobs(
      q,
      (job) => {
        try {
          read.set(job.id, job.data);
        } catch (err) {
          read.set(job.id, err);
        }
      },
      4,
    );
    assert.deepEqual(read.get(a.id), value);
    assert.deepEqual(read.get(b.id), { legacy: 1 });
    assert.deepEqual(read.get(d.id), [1, null]);
    const refused = read.get(c.id);
    assert.ok(refused instanceof InvalidDataError, String(refused));
    assert.match(
      refused.message,
      /^job JOB\w+: its payload cannot be read as data \(.*\)\. A string or bytes/,
    );
    assert.equal((await q.getJob(c.id))?.payload.toString(), "plain text");
  });

  test("serializer raw keeps bytes; a serializer of your own; the Worker's wins over the queue's", async () => {
    const { conn } = ctx();
    const raw = new Queue("model-raw", conn, { serializer: "raw" });
    const bytes = Buffer.from([0, 255, 1]);
    await raw.add(bytes);
    await assert.rejects(
      raw.add({ x: 1 }),
      (err: unknown) =>
        err instanceof InvalidArgumentError &&
        err.argument === "data" &&
        /serializer "raw" stores a string or bytes, got object/.test(err.message),
    );
    const [job] = await runJobs(raw, () => {}, 1);
    assert.deepEqual(job!.data, bytes);

    const reversed = {
      serialize: (v: unknown) => Buffer.from(String(v)).reverse(),
      deserialize: (b: Buffer) => Buffer.from(b).reverse().toString(),
    };
    const own = new Queue("model-own", conn, { serializer: reversed });
    const { id } = await own.add("abc");
    assert.equal((await own.getJob(id))?.payload.toString(), "cba");
    const [mine] = await runJobs(own, () => {}, 1);
    assert.equal(mine!.data, "abc");
    await own.add("xyz");
    const [asRaw] = await runJobs(own, () => {}, 1, { serializer: "raw" });
    assert.equal((asRaw!.data as Buffer).toString(), "zyx");
  });

  test("name and backoff are kept on the row; the job's own backoff times its retry", async () => {
    const q = new Queue("model-backoff", ctx().conn);
    const own = await q.add({ n: 1 }, { name: "send-email", backoff: { type: "fixed", delayMs: 600_000 } });
    const plain = await q.add({ n: 2 }, { backoff: 0, maxAttempts: 2 });
    const none = await q.add({ n: 3 });
    const row = await q.getJob(own.id);
    assert.equal(row?.name, "send-email");
    assert.deepEqual(row?.backoff, { type: "fixed", delayMs: 600_000 });
    assert.deepEqual((await q.getJob(plain.id))?.backoff, { type: "fixed", delayMs: 0 });
    assert.equal((await q.getJob(none.id))?.name, undefined);
    const before = Date.now();
    // The worker's own backoff is 300 s: only the job with none of its own takes it.
    await runJobs(
      q,
      () => {
        throw new Error("flaky");
      },
      4,
      { backoff: { type: "fixed", delayMs: 300_000 } },
    );
    const due = async (id: string) =>
      Number(await ctx().conn.send("ZSCORE", [`emq:{model-backoff}:schedule`, id]));
    assert.ok((await due(own.id)) >= before + 600_000, "the job's own 600 s");
    assert.ok((await due(none.id)) < before + 600_000, "the worker's 300 s");
    assert.ok((await due(none.id)) >= before + 300_000, "the worker's 300 s");
    // Backoff 0: straight back to pending, run again at once, dead at its second attempt.
    assert.equal((await q.getJob(plain.id))?.state, "dead");
    assert.equal((await q.getJob(plain.id))?.attempts, 2);
  });

  test("a job with every optional row field at once is written whole, run and read back", async () => {
    // The row's widest write: each optional field of ADD set, beside state, attempts and payload.
    const q = new Queue("model-every-field", ctx().conn);
    const trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const job = await q.add(
      { n: 1 },
      {
        name: "everything",
        backoff: { type: "fixed", delayMs: 1000 },
        priority: 5,
        maxAttempts: 3,
        trace,
        group: "tenant-a",
        timeoutMs: 30_000,
        key: "every-field-1",
      },
    );
    const row = await q.getJob(job.id);
    assert.equal(row?.state, "pending");
    assert.equal(row?.name, "everything");
    assert.deepEqual(row?.backoff, { type: "fixed", delayMs: 1000 });
    assert.equal(row?.priority, 5);
    assert.equal(row?.maxAttempts, 3);
    assert.equal(row?.trace, trace);
    assert.equal(row?.group, "tenant-a");
    assert.equal(row?.timeoutMs, 30_000);
    const [seen] = await runJobs(q, () => "done", 1);
    assert.deepEqual(seen?.data, { n: 1 });
    assert.equal((await q.getJob(job.id))?.state, "completed");
  });

  test("timestamps: the handler's processedOn and attemptsMade; a finished row's finishedOn", async () => {
    const { conn } = ctx();
    const q = new Queue("model-times", conn);
    const ok = await q.add({});
    const bad = await q.add({}, { maxAttempts: 2, backoff: 0 });
    const server = async () => {
      const [s, us] = (await conn.send("TIME", [])) as Buffer[];
      return Number(String(s)) * 1000 + Math.floor(Number(String(us)) / 1000);
    };
    const before = await server();
    const seen = await runJobs(
      q,
      (job) => {
        if (job.id === bad.id) throw new Error("no");
      },
      3,
    );
    const after = await server();
    for (const job of seen) {
      assert.ok(job.processedOn >= before && job.processedOn <= after, `processedOn ${job.processedOn}`);
    }
    assert.deepEqual(
      seen.filter((j) => j.id === bad.id).map((j) => j.attemptsMade),
      [0, 1],
    );
    const done = await q.getJob(ok.id);
    const dead = await q.getJob(bad.id);
    assert.equal(done?.attemptsMade, 1);
    assert.equal(dead?.attemptsMade, 2);
    for (const row of [done, dead]) {
      assert.ok(row?.finishedOn !== undefined && row.finishedOn >= before && row.finishedOn <= after);
    }
    const listed = await q.getJobs("dead");
    assert.equal(listed[0]?.finishedOn, dead?.finishedOn);
    assert.equal((await q.getJob((await q.add({})).id))?.finishedOn, undefined);
  });

  test("updateData: any job, any state, no token; the handler's copy and its next attempt", async () => {
    const { conn } = ctx();
    const q = new Queue("model-update", conn);
    const { id } = await q.add({ step: 1 }, { maxAttempts: 2, backoff: 0 });
    await q.updateData(id, { step: 2 });
    assert.equal((await q.getJob(id))?.payload.toString(), '{"step":2}');
    const seen: unknown[] = [];
    await runJobs(
      q,
      async (job) => {
        seen.push(job.data);
        if (job.attempts === 1) {
          await job.updateData({ step: 3 });
          seen.push(job.data);
          throw new Error("again");
        }
      },
      2,
    );
    assert.deepEqual(seen, [{ step: 2 }, { step: 3 }, { step: 3 }]);
    await q.updateData(id, { step: 4 }); // a completed job too
    assert.equal((await q.getJob(id))?.payload.toString(), '{"step":4}');
    const missing = "JOB000000000ZZ";
    await assert.rejects(
      q.updateData(missing, {}),
      (e: unknown) =>
        e instanceof JobNotFoundError &&
        e.message === `updateData(${missing}): no job ${missing} in queue "model-update"`,
    );
    await assert.rejects(
      q.updateData(id, undefined),
      (e: unknown) => e instanceof InvalidArgumentError && e.argument === "data",
    );
  });

  test("UnrecoverableError fails the job to dead at once, whatever attempts it has left", async () => {
    const q = new Queue("model-unrecoverable", ctx().conn);
    const a = await q.add({}, { maxAttempts: 5 });
    const b = await q.add({});
    const dead: string[] = [];
    const worker = new Worker(
      q,
      (job) => {
        if (job.id === a.id) throw new UnrecoverableError("card declined");
        const foreign = new Error("bad input");
        foreign.name = "UnrecoverableError"; // another copy's class counts by its name
        throw foreign;
      },
      { ...quiet, attempts: 3 },
    );
    worker.on("dead", (job) => dead.push(job.id));
    await until("both dead", () => dead.length === 2);
    await worker.close();
    const row = await q.getJob(a.id);
    assert.equal(row?.state, "dead");
    assert.equal(row?.attempts, 1);
    assert.equal(row?.error, "UnrecoverableError: card declined");
    assert.equal((await q.getJob(b.id))?.attempts, 1);
  });

  test("waitUntilFinished: the result, the failure, a job finished before, and the ttl", async () => {
    const { conn } = ctx();
    const q = new Queue("model-wait", conn);
    const events = new QueueEvents("model-wait", conn);
    await events.ready;
    try {
      const ok = await q.add({ n: 2 });
      const bad = await q.add({ n: -1 }, { maxAttempts: 1 });
      const waits = [q.waitUntilFinished(ok.id, events), q.waitUntilFinished(bad.id, events)];
      const worker = new Worker(
        q,
        (job) => {
          const { n } = job.data as { n: number };
          if (n < 0) throw new Error("negative");
          return { doubled: n * 2 };
        },
        quiet,
      );
      const [result, failure] = await Promise.allSettled(waits);
      assert.deepEqual(result, { status: "fulfilled", value: { doubled: 4 } });
      assert.equal(failure?.status, "rejected");
      const err = (failure as PromiseRejectedResult).reason;
      assert.ok(err instanceof JobFailedError, String(err));
      assert.equal(err.failedReason, "Error: negative");
      // Finished before the wait began: its row answers.
      assert.deepEqual(await q.waitUntilFinished(ok.id, events), { doubled: 4 });
      await worker.close();
      const later = await q.add({ n: 1 }, { delay: 600_000 });
      await assert.rejects(
        q.waitUntilFinished(later.id, events, 50),
        (e: unknown) =>
          e instanceof WaitUntilFinishedError && /had not finished within 50 ms/.test(e.message),
      );
      await assert.rejects(
        q.waitUntilFinished(later.id, events, 0),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === "ttlMs",
      );
    } finally {
      await events.close();
    }
  });
});

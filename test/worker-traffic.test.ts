/**
 * The worker under the traffic users have, on both wires: a burst released by resume() or by
 * delayed jobs coming due wakes every idle slot; errors never vanish (a logger hears what no
 * listener does); fatal errors stop the worker loudly; results and backoffs the protocol cannot
 * carry fail the attempt at once; bad options are refused at construction.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import {
  connect,
  InvalidArgumentError,
  type Job,
  Queue,
  ServerError,
  VersionFenceError,
  Worker,
  type WorkerOptions,
} from "../src/index.js";
import { InvalidBackoffError, InvalidResultError } from "../src/errors.js";
import { startProxy } from "./support/proxy.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";
import { V, WIRE4, WIRE6 } from "./support/module.js";

/** A handler that sleeps `ms` and records how many handlers ran at once. */
function busyHandler(ms: number) {
  const stats = { running: 0, peak: 0, done: 0 };
  const handler = async () => {
    stats.running += 1;
    stats.peak = Math.max(stats.peak, stats.running);
    await sleep(ms);
    stats.running -= 1;
    stats.done += 1;
  };
  return { stats, handler };
}

/** Collects what reaches a logger. */
function recordingLogger() {
  const lines: { message: string; error: unknown }[] = [];
  return { lines, logger: { warn: (message: string, error: unknown) => lines.push({ message, error }) } };
}

const SLOW_TICK: WorkerOptions = { idleCheckMs: 60_000, promoteEveryMs: 50, reapEveryMs: 60_000 };

forEachWire("worker under real traffic", (ctx) => {
  test("resume() of a paused queue: every idle slot runs (peak = concurrency), every job once", async () => {
    const q = new Queue("rt1", ctx().conn);
    await q.pause();
    await q.addBulk(Array.from({ length: 400 }, (_, i) => ({ payload: `j${i}` })));
    const { stats, handler } = busyHandler(20);
    // The safety tick is a minute: only wakes and the claim chain can start the slots.
    const worker = new Worker(q, handler, { ...SLOW_TICK, concurrency: 20, keepCompleted: 0 });
    await worker.ready;
    await sleep(50);
    assert.equal(stats.done, 0, "a paused queue runs nothing");
    await q.resume();
    await until("400 jobs done", () => stats.done === 400, 30_000);
    await worker.close();
    assert.equal(stats.peak, 20, "all 20 slots ran at once");
    assert.deepEqual(
      { ...(await q.counts()), paused: false },
      {
        pending: 0,
        scheduled: 0,
        active: 0,
        completed: 0,
        dead: 0,
        waiting: 0,
        paused: false,
      },
    );
  });

  test("delayed jobs coming due together: the promotion wakes every idle slot", async () => {
    const q = new Queue("rt2", ctx().conn);
    const { stats, handler } = busyHandler(20);
    const worker = new Worker(q, handler, { ...SLOW_TICK, concurrency: 20, keepCompleted: 0 });
    await worker.ready;
    await q.addBulk(Array.from({ length: 400 }, (_, i) => ({ payload: `d${i}`, opts: { delay: 300 } })));
    await until("400 delayed jobs done", () => stats.done === 400, 30_000);
    await worker.close();
    assert.equal(stats.peak, 20, "all 20 slots ran at once");
  });

  test("a lone add with 20 idle slots runs once; the chain stops at the empty queue", async () => {
    const q = new Queue("rt3", ctx().conn);
    const seen: string[] = [];
    const worker = new Worker(q, (job: Job) => void seen.push(job.id), { ...SLOW_TICK, concurrency: 20 });
    await worker.ready;
    const { id } = await q.add("one");
    await until("the job ran", () => seen.length === 1, 10_000);
    await sleep(100);
    await worker.close();
    assert.deepEqual(seen, [id]);
  });

  test("a result that cannot be stored fails the attempt at once with the reason on the job; the logger hears it", async () => {
    const q = new Queue("rt4", ctx().conn);
    const { lines, logger } = recordingLogger();
    const failed: unknown[] = [];
    const worker = new Worker(q, () => ({ big: 10n }), {
      ...SLOW_TICK,
      logger,
      attempts: 1,
      leaseMs: 60_000,
    });
    worker.on("failed", (_job, err) => failed.push(err));
    const { id } = await q.add("x");
    await until("the attempt failed", () => failed.length === 1, 10_000);
    await worker.close();
    assert.ok(failed[0] instanceof InvalidResultError);
    const info = await q.getJob(id);
    assert.equal(info?.state, "dead", "failed at once, not left to a 60 s lease");
    assert.match(info?.error ?? "", /^InvalidResultError: the handler's result cannot be stored: .*BigInt/);
    assert.ok(
      lines.some((l) => l.error instanceof InvalidResultError),
      "no error listener: the logger heard it",
    );
  });

  test("a backoff that throws or gives NaN settles the job with no delay and reports it", async () => {
    for (const [label, backoff] of [
      [
        "throws",
        () => {
          throw new Error("backoff boom");
        },
      ],
      ["NaN", () => Number.NaN],
      ["1e300", () => 1e300],
    ] as const) {
      const q = new Queue(`rt5-${label}`, ctx().conn);
      const errors: unknown[] = [];
      const runs: number[] = [];
      const worker = new Worker(
        q,
        (job: Job) => {
          runs.push(job.attempts);
          throw new Error("handler boom");
        },
        { ...SLOW_TICK, backoff: backoff as () => number, attempts: 2 },
      );
      worker.on("error", (err) => errors.push(err));
      const { id } = await q.add("x");
      await until(`dead (${label})`, async () => (await q.getJob(id))?.state === "dead", 10_000);
      await worker.close();
      assert.deepEqual(runs, [1, 2], `${label}: retried at once, then dead`);
      assert.match((await q.getJob(id))?.error ?? "", /^Error: handler boom$/, "the real cause is stored");
      assert.ok(
        errors.some((e) => e instanceof InvalidBackoffError),
        `${label}: the error listener heard why`,
      );
    }
  });

  test("close() hands back a job on its last attempt: pending, its limit raised, never dead; it runs again", async () => {
    const q = new Queue("rt9", ctx().conn);
    const { id } = await q.add("last", { maxAttempts: 1 });
    const started: number[] = [];
    const holding = new Worker(
      q,
      async (job: Job) => {
        started.push(job.attempts);
        await new Promise((resolve) => job.signal.addEventListener("abort", resolve, { once: true }));
      },
      { ...SLOW_TICK, attempts: 1, closeGraceMs: 0 },
    );
    const stalled: string[] = [];
    holding.on("stalled", (back, dead) => stalled.push(...back, ...dead));
    await until("the job started", () => started.length === 1, 10_000);
    await holding.close();
    const after = await q.getJob(id);
    assert.equal(after?.state, "pending", "handed back, not dead");
    assert.equal(after?.attempts, 1, "attempts (the lease token) never decreases");
    assert.equal(after?.maxAttempts, 2, "the attempt it held is given back");
    assert.deepEqual(stalled, [], "a hand-back is not reported as a stalled lease");
    const ran: number[] = [];
    const next = new Worker(q, (job: Job) => void ran.push(job.attempts), { ...SLOW_TICK, attempts: 1 });
    await until("the job completed", async () => (await q.getJob(id))?.state === "completed", 10_000);
    await next.close();
    assert.deepEqual(ran, [2], "it ran once more and completed");
  });

  test("bad options are refused at construction, naming the option and its bounds", () => {
    const q = new Queue("rt6", ctx().conn);
    const cases: [WorkerOptions, string, RegExp][] = [
      [{ leaseMs: 5e15 }, "leaseMs", /from 10 to 2147483647, got 5000000000000000/],
      [{ attempts: 5e15 }, "attempts", /from 1 to 999999999999999/],
      [{ keepCompleted: 5e15 }, "keepCompleted", /from 0 to 999999999999999/],
      [{ keepDead: -1 }, "keepDead", /got -1/],
      [{ promoteEveryMs: 2 ** 31 }, "promoteEveryMs", /to 2147483647, got 2147483648/],
      [{ reapEveryMs: 2 ** 40 }, "reapEveryMs", /to 2147483647/],
      [{ idleCheckMs: 0 }, "idleCheckMs", /from 1 to/],
      [{ closeGraceMs: 2 ** 31 }, "closeGraceMs", /to 2147483647/],
      [{ concurrency: 1e9 }, "concurrency", /from 1 to 10000, got 1000000000/],
      [{ logger: {} as never }, "logger", /warn\(message, error\)/],
    ];
    for (const [options, argument, pattern] of cases) {
      const t0 = Date.now();
      assert.throws(
        () => new Worker(q, () => {}, options),
        (e: unknown) =>
          e instanceof InvalidArgumentError && e.argument === argument && pattern.test(e.message),
        argument,
      );
      assert.ok(Date.now() - t0 < 1000, `${argument} is refused at once`);
    }
  });

  test("a fatal error (the node re-branded for the other wire) stops the worker once, loudly", async () => {
    const { server, wire } = ctx();
    const proxy = await startProxy({ targetPort: server.port });
    const conn = await connect({ port: proxy.port, wire });
    const q = new Queue("rt7", conn);
    const errors: unknown[] = [];
    const worker = new Worker(q, () => {}, { ...SLOW_TICK, idleCheckMs: 50, concurrency: 4 });
    worker.on("error", (err) => errors.push(err));
    await worker.ready;
    const brand = String(await server.cli("GET", V));
    try {
      await server.cli("SET", V, wire === 4 ? WIRE6 : WIRE4);
      proxy.cut();
      await assert.rejects(worker.closed, (e: unknown) => e instanceof VersionFenceError);
      await assert.rejects(worker.close(), (e: unknown) => e instanceof VersionFenceError);
      const fences = errors.filter((e) => e instanceof VersionFenceError);
      assert.equal(fences.length, 1, "reported once");
      await sleep(100); // bytes written before the stop may still be on their way through the proxy
      const before = proxy.commands.length;
      await sleep(300);
      const extra = proxy.commands.slice(before).map((c) => `${c.conn}: ${c.args.join(" ")}`);
      assert.deepEqual(extra, [], "a stopped worker sends nothing more");
    } finally {
      await server.cli("SET", V, brand);
      await conn.close();
      await proxy.close();
    }
  });

  test("NOPERM on the queue is fatal: the worker stops and says why", async () => {
    const { server, wire } = ctx();
    await server.cli("ACL", "SETUSER", "limited", "on", ">pw", "~emq:{other}:*", `%R~${V}`, "+@all");
    const conn = await connect({ port: server.port, wire, username: "limited", password: "pw" });
    const errors: unknown[] = [];
    const worker = new Worker(new Queue("rt8", conn), () => {}, { ...SLOW_TICK, concurrency: 3 });
    worker.on("error", (err) => errors.push(err));
    try {
      await assert.rejects(
        worker.closed,
        (e: unknown) => e instanceof ServerError && /^NOPERM/.test(e.reply),
      );
      assert.equal(errors.length, 1);
    } finally {
      await conn.close();
      await server.cli("ACL", "DELUSER", "limited");
    }
  });
});

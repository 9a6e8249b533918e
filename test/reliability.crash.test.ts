/**
 * The Worker's reliability on both wires when a worker dies or goes stale: a worker killed with
 * SIGKILL mid-job loses nothing (at-least-once, re-runs only for the jobs it held), and a stale
 * worker (lease reaped, job claimed elsewhere) can change nothing.
 *
 * Every wait is a bounded poll for a condition; fixed sleeps only open measurement windows.
 * Measured numbers are reported with `t.diagnostic` (shown by the spec reporter).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, connect, type Job, LeaseLostError, Queue, Worker } from "../src/index.js";
import { claim, complete, extend, fail, queueKey, reap, requeue, reschedule } from "../src/protocol.js";
import { LOG_KEY, loggingHandler, RUNS_KEY } from "./fixtures/log-handler.js";
import { startProxy } from "./support/proxy.js";
import { dumpQueue, forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";
import {
  within,
  plainClient,
  rowsByState,
  noErrors,
  idleSlots,
  spawnChildWorker,
  shut,
} from "./support/reliability.js";

forEachWire("worker reliability: crashes", (ctx) => {
  test("SIGKILL mid-job: every job runs to completion, re-runs only for the jobs the killed worker held", {
    timeout: 150_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 400;
    const q = "crash";
    const active = queueKey(q, "active");
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    const ids = (await queue.addBulk(Array.from({ length: N }, (_, i) => ({ payload: `job ${i}` })))).map(
      (x) => x.id,
    );
    assert.equal(new Set(ids).size, N);

    // 1. A worker in a child process runs until ≥ 100 jobs are logged and some are active: SIGKILL.
    const kid = spawnChildWorker(server.port, wire, q);
    let w: Worker | undefined;
    let wConn: Connection | undefined;
    const log = plainClient(server.port);
    try {
      await within("the child worker to be ready", kid.ready, 60_000);
      const t0 = Date.now();
      await until(
        "≥ 100 jobs logged and some active",
        async () => Number(await r.scard(LOG_KEY)) >= 100 && Number(await r.zcard(active)) > 0,
        60_000,
        5,
      );
      kid.child.kill("SIGKILL");
      await within("the child to exit", kid.exited, 10_000);
      const runFor = Date.now() - t0;
      // Commands the child wrote before dying are processed before the server drops its socket:
      // only once its connections are gone is the active set final.
      await until(
        "the server to drop the child's connections",
        async () => !/ name=emq-(child|wake-)/.test(String(await r.client("LIST"))),
        10_000,
      );
      const held = await r.zrange(active, 0, -1);
      const loggedAtKill = Number(await r.scard(LOG_KEY));
      const doneAtKill = Number(await r.zcard(queueKey(q, "done")));
      assert.ok(held.length > 0, "the killed worker held jobs");
      assert.ok(held.length <= 10, `the child (concurrency 10) held ${held.length} jobs`);

      // 2. A second worker, in-process, with the same handler: reaps the dead worker's leases.
      wConn = await conn.duplicate();
      w = new Worker(new Queue(q, wConn), loggingHandler(log), {
        concurrency: 10,
        leaseMs: 5000,
        reapEveryMs: 100,
        keepCompleted: 10_000,
      });
      const stalledRequeued: string[] = [];
      const stalledDead: string[] = [];
      const completedBySecond = new Set<string>();
      const errors: unknown[] = [];
      w.on("stalled", (requeued, dead) => {
        stalledRequeued.push(...requeued);
        stalledDead.push(...dead);
      });
      w.on("completed", (job) => completedBySecond.add(job.id));
      w.on("error", (err) => errors.push(err));
      w.on("leaseLost", (job) => errors.push(new Error(`second worker lost the lease of ${job.id}`)));
      const t1 = Date.now();
      await w.ready;
      await until("all jobs completed", async () => (await queue.counts()).completed === N, 90_000, 50);
      const recoverMs = Date.now() - t1;
      await w.close();

      // Every job of the run is in the log, as a set, exactly once.
      assert.equal(Number(await r.scard(LOG_KEY)), N);
      assert.deepEqual((await r.smembers(LOG_KEY)).sort(), [...ids].sort());
      // Every row is completed (keepCompleted ≥ N keeps them), nothing active, pending or dead.
      assert.deepEqual(await rowsByState(r, q), { completed: N });
      const counts = await queue.counts();
      assert.deepEqual(
        { pending: counts.pending, scheduled: counts.scheduled, active: counts.active, dead: counts.dead },
        { pending: 0, scheduled: 0, active: 0, dead: 0 },
      );
      // The jobs the killed worker held were reaped (the 'stalled' event names them) and completed
      // by the second worker on a later attempt.
      assert.deepEqual(stalledDead, []);
      assert.deepEqual([...stalledRequeued].sort(), [...held].sort(), "exactly the held jobs were reaped");
      for (const id of held) {
        assert.ok(completedBySecond.has(id), `held job ${id} completed by the second worker`);
        const row = await queue.getJob(id);
        assert.equal(row?.state, "completed");
        assert.ok(row.attempts >= 2, `held job ${id} ran again (attempts ${row.attempts})`);
      }
      // At-least-once: every job ran; more than once only if the killed worker held it.
      const runs = await r.hgetall(RUNS_KEY);
      assert.equal(Object.keys(runs).length, N);
      const heldSet = new Set(held);
      const rerun: string[] = [];
      for (const id of ids) {
        const n = Number(runs[id]);
        assert.ok(n >= 1, `job ${id} ran`);
        if (n > 1) rerun.push(id);
      }
      for (const id of rerun) assert.ok(heldSet.has(id), `job ${id} ran ${runs[id]} times but was not held`);
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: child ran ${runFor} ms, logged ${loggedAtKill} (done ${doneAtKill}) at SIGKILL, ` +
          `held ${held.length} (re-run ${rerun.length}); second worker finished ${completedBySecond.size} ` +
          `jobs in ${recoverMs} ms`,
      );
    } finally {
      if (kid.child.exitCode === null && kid.child.signalCode === null) kid.child.kill("SIGKILL");
      await shut(w, wConn);
      await log.quit().catch(() => log.disconnect());
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("a stale worker (lease reaped, job claimed elsewhere) can change nothing", {
    timeout: 60_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const q = "stale";
    const active = queueKey(q, "active");
    const { id } = await new Queue(q, conn).add("J");
    // Worker A reaches the server through a proxy that can hold its commands, so the test acts
    // behind its back without racing its heartbeat.
    const proxy = await startProxy({ targetPort: server.port });
    const aConn = await connect({ port: proxy.port, wire });
    const other = await conn.duplicate();
    let a: Worker | undefined;
    try {
      let releaseHandler!: () => void;
      const handlerGate = new Promise<void>((resolve) => {
        releaseHandler = resolve;
      });
      let started!: (job: Job) => void;
      const startedJob = new Promise<Job>((resolve) => {
        started = resolve;
      });
      let handlerReturned = false;
      a = new Worker(
        new Queue(q, aConn),
        async (job) => {
          started(job);
          await handlerGate;
          handlerReturned = true;
          return "late result";
        },
        { concurrency: 1, leaseMs: 300, reapEveryMs: 60_000, promoteEveryMs: 60_000, idleCheckMs: 60_000 },
      );
      const seen: string[] = [];
      for (const event of ["completed", "failed", "retrying", "dead", "stalled", "error"] as const) {
        a.on(event, () => seen.push(event));
      }
      const lost = new Promise<{ job: Job; err: unknown }>((resolve) =>
        a!.once("leaseLost", (job, err) => resolve({ job, err })),
      );
      await a.ready;
      const job = await within("A to start J", startedJob, 10_000);
      assert.equal(job.id, id);
      assert.equal(job.attempts, 1);

      // A's heartbeat renews the lease (every leaseMs / 3).
      const firstDeadline = Number(await conn.client.zscore(active, id));
      await until(
        "A's heartbeat to extend the lease",
        async () => Number(await conn.client.zscore(active, id)) > firstDeadline,
        5000,
        10,
      );

      // Behind A's back: expire the lease, reap it, claim it on another connection.
      proxy.hold();
      await server.cli("ZADD", active, "0", id);
      assert.deepEqual(await reap(other, q, { limit: 100, maxAttempts: 3, keep: 100 }), {
        requeued: [id],
        dead: [],
      });
      const mine = await claim(other, q, 60_000);
      assert.ok(mine);
      assert.equal(mine.id, id);
      assert.equal(mine.attempts, 2);
      const reclaimed = await dumpQueue(server, q);
      assert.equal((reclaimed[`emq:{${q}}:job:${id}`] as Record<string, string>).state, "active");

      // A's next extend is refused: leaseLost, its handler's signal aborts.
      proxy.release();
      const { job: lostJob, err } = await within("A's leaseLost", lost, 10_000);
      assert.equal(lostJob.id, id);
      assert.ok(err instanceof LeaseLostError, `leaseLost carries a LeaseLostError, got ${String(err)}`);
      assert.equal(err.reason, "stale token");
      assert.ok(job.signal.aborted);

      // Release A's handler: A must not complete, fail, extend or move the job.
      releaseHandler();
      await until("A's handler to return", () => handlerReturned, 5000, 5);
      await until("A to drop the job", () => a!.activeCount === 0, 5000, 5);
      await until("A's slot to idle", () => idleSlots(a!) === 1, 5000, 5);
      await aConn.send("PING", []); // anything A sent before is processed by now
      assert.deepEqual(await dumpQueue(server, q), reclaimed);
      assert.deepEqual(seen, []);
      const row = await new Queue(q, conn).getJob(id);
      assert.equal(row?.state, "active");
      assert.equal(row.attempts, 2);
      assert.equal(Number(await conn.client.zcard(queueKey(q, "done"))), 0);
      await a.close();
      assert.deepEqual(await dumpQueue(server, q), reclaimed, "A's close() hands nothing back");

      // Directly: every lease verb with the stale token 1 is refused and writes nothing.
      const stale: [string, () => Promise<unknown>][] = [
        ["complete", () => complete(other, q, id, 1, "x", 100)],
        ["fail", () => fail(other, q, id, 1, "boom", { backoffMs: 0, maxAttempts: 3, keep: 100 })],
        [
          "fail with backoff",
          () => fail(other, q, id, 1, "boom", { backoffMs: 5000, maxAttempts: 3, keep: 100 }),
        ],
        ["fail to dead", () => fail(other, q, id, 1, "boom", { backoffMs: 0, maxAttempts: 1, keep: 100 })],
        ["extend", () => extend(other, q, id, 1, 60_000)],
        ["requeue", () => requeue(other, q, id, 1, 3)],
      ];
      stale.push(["reschedule", () => reschedule(other, q, id, 1, 5000)]);
      for (const [verb, call] of stale) {
        await assert.rejects(
          call(),
          (e: unknown) => e instanceof LeaseLostError && e.reason === "stale token",
          `${verb} with token 1`,
        );
        assert.deepEqual(await dumpQueue(server, q), reclaimed, `${verb} with token 1 wrote nothing`);
      }
      // The holder of token 2 still completes it.
      await complete(other, q, id, 2, "ok", 100);
      assert.equal((await new Queue(q, conn).getJob(id))?.state, "completed");
      t.diagnostic(`wire ${wire}: A's extend refused with "${(err as Error).message}"`);
    } finally {
      await shut(a, aConn);
      await other.close();
      await proxy.close();
    }
  });
});

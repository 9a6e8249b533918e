/**
 * The Worker's close() on both wires: under load it loses no job (a new worker finishes the rest),
 * it hands back a job whose claim was still in flight, and it does not wait out its grace for a slot
 * whose claim comes back empty.
 *
 * Every wait is a bounded poll for a condition; fixed sleeps only open measurement windows.
 * Measured numbers are reported with `t.diagnostic` (shown by the spec reporter).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connect, Queue, Worker } from "../src/index.js";
import { queueKey } from "../src/protocol.js";
import { startProxy } from "./support/proxy.js";
import { dumpQueue, forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";
import { within, plainClient, rowsByState, noErrors, idleSlots, shut } from "./support/reliability.js";

forEachWire("worker reliability: close()", (ctx) => {
  test("close() under load loses no job; a new worker finishes the rest", { timeout: 150_000 }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 1500;
    const q = "close";
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    for (let i = 0; i < N; i += 500) {
      await queue.addBulk(Array.from({ length: Math.min(500, N - i) }, (_, j) => ({ payload: `c${i + j}` })));
    }
    const handler = async () => {
      await sleep(5 + Math.floor(Math.random() * 76));
    };
    const firstCompleted = new Set<string>();
    const afterClose: string[] = [];
    let closed = false;
    let w1: Worker | undefined;
    let w2: Worker | undefined;
    const c1 = await conn.duplicate();
    const c2 = await conn.duplicate();
    try {
      const errors: unknown[] = [];
      w1 = new Worker(
        new Queue(q, c1),
        async () => {
          if (closed) afterClose.push("handler");
          await handler();
        },
        // A short lease: the heartbeat (every leaseMs / 3 = 30 ms) fires during most handlers, and
        // so also while close() hands the unfinished ones back.
        { concurrency: 20, leaseMs: 90, closeGraceMs: 50, keepCompleted: 10_000 },
      );
      w1.on("completed", (job) => {
        if (closed) afterClose.push(`completed ${job.id}`);
        firstCompleted.add(job.id);
      });
      w1.on("error", (err) => errors.push(err));
      // A job handed back by close() is not a lost lease.
      w1.on("leaseLost", (job, err) => errors.push(`leaseLost ${job.id}: ${String(err)}`));
      for (const event of ["failed", "dead"] as const)
        w1.on(event, (job) => errors.push(`${event} ${job.id}`));
      await w1.ready;
      await until("some jobs completed", () => firstCompleted.size > 0, 30_000, 5);
      await sleep(300);
      const runningAtClose = w1.activeCount;
      const t0 = Date.now();
      await within("close()", w1.close(), 30_000);
      const closeMs = Date.now() - t0;
      closed = true;

      // After close: nothing active; every job pending, scheduled or completed; none dead.
      const states = await rowsByState(r, q);
      const counts = await queue.counts();
      assert.equal(counts.active, 0, `active set empty after close (rows: ${JSON.stringify(states)})`);
      assert.equal(states.active ?? 0, 0, "no row left active");
      assert.equal(counts.dead, 0);
      assert.equal((states.pending ?? 0) + (states.scheduled ?? 0) + (states.completed ?? 0), N);
      assert.equal(states.completed ?? 0, firstCompleted.size);
      assert.equal(counts.completed, firstCompleted.size);
      assert.ok((states.pending ?? 0) > 0, "jobs were left for the next worker");
      noErrors(errors);
      // The closed worker does nothing more, even after a while.
      const frozen = await dumpQueue(server, q);
      await sleep(200); // longer than w1's lease and heartbeat interval: a stray write would show
      assert.deepEqual(await dumpQueue(server, q), frozen, "the closed worker wrote nothing more");
      assert.deepEqual(afterClose, []);

      // A new worker finishes the rest.
      const secondCompleted = new Set<string>();
      w2 = new Worker(new Queue(q, c2), handler, {
        concurrency: 20,
        keepCompleted: 10_000,
        promoteEveryMs: 100,
      });
      w2.on("completed", (job) => secondCompleted.add(job.id));
      w2.on("error", (err) => errors.push(err));
      const t1 = Date.now();
      await w2.ready;
      await until("all N completed", async () => (await queue.counts()).completed === N, 90_000, 50);
      const restMs = Date.now() - t1;
      assert.deepEqual(await rowsByState(r, q), { completed: N });
      for (const id of secondCompleted) assert.ok(!firstCompleted.has(id), `job ${id} completed twice`);
      assert.equal(firstCompleted.size + secondCompleted.size, N);
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: ${firstCompleted.size} completed before close, ${runningAtClose} running at close(), ` +
          `close() took ${closeMs} ms, left pending ${states.pending ?? 0} / scheduled ${states.scheduled ?? 0}; ` +
          `second worker finished ${secondCompleted.size} in ${restMs} ms`,
      );
    } finally {
      await shut(w1, c1);
      await shut(w2, c2);
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("close() also hands back a job whose claim was still in flight (closeGraceMs 0)", {
    timeout: 60_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const q = "late-claim";
    const queue = new Queue(q, conn);
    // The worker reaches the server through a proxy that holds its commands: its claim is sent
    // but not answered until the test releases it, after close() has begun.
    const proxy = await startProxy({ targetPort: server.port });
    const wConn = await connect({ port: proxy.port, wire });
    let w: Worker | undefined;
    let releaseHandler!: () => void;
    const handlerGate = new Promise<void>((resolve) => {
      releaseHandler = resolve;
    });
    try {
      const started: string[] = [];
      const events: string[] = [];
      w = new Worker(
        new Queue(q, wConn),
        async (job) => {
          started.push(job.id);
          await handlerGate;
        },
        { concurrency: 1, closeGraceMs: 0, promoteEveryMs: 60_000, reapEveryMs: 60_000, idleCheckMs: 60_000 },
      );
      for (const event of ["completed", "failed", "leaseLost", "error"] as const)
        w.on(event, () => events.push(event));
      await w.ready;
      await until("the slot to idle", () => idleSlots(w!) === 1, 10_000, 5);

      proxy.hold();
      const { id } = await queue.add("late"); // its wake message reaches the worker: the slot claims
      await until("the worker's claim to be sent (and held)", () => proxy.heldBytes() > 0, 10_000, 2);
      const closing = w.close();
      await sleep(50); // let the 0 ms grace run out while the claim is unanswered
      proxy.release();
      await within("close()", closing, 10_000);

      // After close() the worker does nothing more: no late claim, and its handler (if it
      // started) finishing writes nothing.
      const frozen = await dumpQueue(server, q);
      releaseHandler();
      await sleep(100);
      assert.deepEqual(await dumpQueue(server, q), frozen, "the closed worker wrote nothing more");
      // The job the in-flight claim brought back was handed back: pending again, nothing active.
      assert.equal(Number(await conn.client.zcard(queueKey(q, "active"))), 0, "active set empty after close");
      const row = await queue.getJob(id);
      assert.equal(row?.state, "pending");
      assert.equal(row.attempts, 1, "the claim landed before close() resolved");
      assert.deepEqual(events, []);
      t.diagnostic(`wire ${wire}: handler started ${started.length} time(s) before the hand-back`);
    } finally {
      releaseHandler();
      await shut(w, wConn);
      await proxy.close();
    }
  });

  test("close() does not wait out its grace for a slot whose claim comes back empty", {
    timeout: 60_000,
  }, async (t) => {
    const { server, wire } = ctx();
    const q = "empty-claim";
    const proxy = await startProxy({ targetPort: server.port });
    const wConn = await connect({ port: proxy.port, wire });
    let w: Worker | undefined;
    try {
      // The wake channel's path (a wake releases a slot, which claims): no blocking claim on wire 6.
      w = new Worker(new Queue(q, wConn), () => {}, {
        concurrency: 1,
        closeGraceMs: 10_000,
        promoteEveryMs: 60_000,
        reapEveryMs: 60_000,
        idleCheckMs: 60_000,
        blockMs: 0,
      });
      await w.ready;
      await until("the slot to idle", () => idleSlots(w!) === 1, 10_000, 5);
      // A wake message on an empty queue: the slot claims, and the claim is held unanswered.
      proxy.hold();
      await server.cli("SPUBLISH", queueKey(q, "wake"), "1");
      await until("the worker's claim to be sent (and held)", () => proxy.heldBytes() > 0, 10_000, 2);
      const t0 = Date.now();
      const closing = w.close();
      await sleep(20); // close() has woken the idle slots by now; the claim is still unanswered
      proxy.release();
      await within("close()", closing, 20_000);
      const closeMs = Date.now() - t0;
      assert.ok(closeMs < 5000, `close() took ${closeMs} ms (grace 10000 ms): a slot went back to wait`);
      assert.equal(idleSlots(w), 0, "no slot waits on the gate after close()");
      t.diagnostic(`wire ${wire}: close() took ${closeMs} ms`);
    } finally {
      await shut(w, wConn);
      await proxy.close();
    }
  });
});

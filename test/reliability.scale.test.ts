/**
 * The Worker on both wires at scale: 50,000 jobs due in one millisecond all run exactly once, and
 * retention keeps memory flat over 200,000 jobs.
 *
 * Every wait is a bounded poll for a condition; fixed sleeps only open measurement windows.
 * Measured numbers are reported with `t.diagnostic` (shown by the spec reporter).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Queue, Worker } from "../src/index.js";
import { queueKey } from "../src/protocol.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";
import { plainClient, countRows, infoField, noErrors, shut, serverNowMs } from "./support/reliability.js";

forEachWire("worker reliability: at scale", (ctx) => {
  test("50,000 delayed jobs due in the same millisecond all run exactly once", {
    timeout: 180_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 50_000;
    const q = "same-ms";
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    let w: Worker | undefined;
    const wConn = await conn.duplicate();
    try {
      const t0 = Date.now();
      for (let i = 0; i < N; i += 5000) {
        await queue.addBulk(
          Array.from({ length: 5000 }, (_, j) => ({ payload: `d${i + j}`, opts: { delay: 600_000 } })),
        );
      }
      const addMs = Date.now() - t0;
      assert.equal((await queue.counts()).scheduled, N);
      // Every member of the schedule to one due millisecond: server now + 300 ms.
      const [rewritten, due] = (await server.cli(
        "EVAL",
        "local t = redis.call('TIME') " +
          "local due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1]) " +
          "local ids = redis.call('ZRANGE', KEYS[1], 0, -1) " +
          "for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], string.format('%d', due), id) end " +
          "return { #ids, due }",
        1,
        queueKey(q, "schedule"),
        300,
      )) as [number, number];
      assert.equal(Number(rewritten), N);
      assert.equal(
        Number(await r.zcount(queueKey(q, "schedule"), due, due)),
        N,
        "all due at one millisecond",
      );

      const runs = new Map<string, number>();
      const completed = new Set<string>();
      let completions = 0;
      const errors: unknown[] = [];
      w = new Worker(
        new Queue(q, wConn),
        (job) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        },
        { concurrency: 50, promoteEveryMs: 100, keepCompleted: 0 },
      );
      w.on("completed", (job) => {
        completions += 1;
        completed.add(job.id);
      });
      w.on("error", (err) => errors.push(err));
      w.on("stalled", (requeued, dead) => errors.push(`stalled ${requeued.length}/${dead.length}`));
      const t1 = Date.now();
      await w.ready;
      await until("50,000 completions", () => completions >= N, 90_000, 50);
      const runMs = Date.now() - t1;
      const lastAfterDue = (await serverNowMs(server)) - Number(due);
      await until(
        "schedule, pending and active empty",
        async () => {
          const c = await queue.counts();
          return c.scheduled === 0 && c.pending === 0 && c.active === 0;
        },
        10_000,
      );
      await w.close();
      assert.equal(completed.size, N);
      assert.equal(completions, N, "no job completed twice");
      assert.equal(runs.size, N);
      assert.ok(
        [...runs.values()].every((n) => n === 1),
        "every handler ran exactly once",
      );
      assert.equal(await countRows(r, q), 0, "keepCompleted 0 deleted every row");
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: addBulk ${N} in ${addMs} ms; all run in ${runMs} ms after the worker started ` +
          `(${Math.round(N / (runMs / 1000))} jobs/s); the last completed ${lastAfterDue} ms after the due millisecond`,
      );
    } finally {
      await shut(w, wConn);
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("retention keeps memory flat: 200,000 jobs with keepCompleted 1000", {
    timeout: 290_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 200_000;
    const CHUNK = 5000;
    const KEEP = 1000;
    const q = "retention";
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    let w: Worker | undefined;
    const wConn = await conn.duplicate();
    try {
      let completions = 0;
      const errors: unknown[] = [];
      w = new Worker(new Queue(q, wConn), () => {}, { concurrency: 50, keepCompleted: KEEP });
      w.on("completed", () => {
        completions += 1;
      });
      w.on("error", (err) => errors.push(err));
      await w.ready;
      await r.memory("PURGE").catch(() => {});
      const before = infoField(await r.info("memory"), "used_memory");
      let peak = before;
      const t0 = Date.now();
      for (let i = 0; i < N; i += CHUNK) {
        await queue.addBulk(Array.from({ length: CHUNK }, (_, j) => ({ payload: `r${i + j}` })));
        // Keep the producer at most a few chunks ahead of the worker.
        await until(
          "the worker to catch up",
          async () => (await queue.counts()).pending < 4 * CHUNK,
          120_000,
          20,
        );
        peak = Math.max(peak, infoField(await r.info("memory"), "used_memory"));
      }
      await until("200,000 completions", () => completions >= N, 180_000, 50);
      const runMs = Date.now() - t0;
      await until(
        "pending and active empty",
        async () => {
          const c = await queue.counts();
          return c.pending === 0 && c.active === 0;
        },
        10_000,
      );
      await w.close();
      const rows = await countRows(r, q);
      const done = Number(await r.zcard(queueKey(q, "done")));
      await r.memory("PURGE").catch(() => {});
      const after = infoField(await r.info("memory"), "used_memory");
      assert.equal(completions, N);
      assert.ok(rows <= KEEP + 10, `job rows after: ${rows}`);
      assert.ok(done <= KEEP + 10, `done holds ${done}`);
      const BOUND = 2 * 1024 * 1024;
      assert.ok(
        after <= before + BOUND,
        `used_memory ${before} before, ${after} after (+${after - before} bytes, bound ${BOUND})`,
      );
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: ${N} jobs added and processed in ${runMs} ms (${Math.round(N / (runMs / 1000))} jobs/s); ` +
          `rows after ${rows}, done ${done}; used_memory before ${before}, peak ${peak}, after ${after} ` +
          `(+${after - before} bytes)`,
      );
    } finally {
      await shut(w, wConn);
      await r.quit().catch(() => r.disconnect());
    }
  });
});

/**
 * `job.progress()` and `job.log()` from a handler, on both wires: kept on the job's row (read with
 * `getJob`), the log bounded to its last 100 lines, progress announced on the bus, and a stale
 * worker's writes refused with `LeaseLostError`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { progress, claim, reap, log } from "../src/protocol.js";
import { InvalidArgumentError, LeaseLostError, Queue, Worker } from "../src/index.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";

forEachWire("job progress and logs", (ctx) => {
  test("a handler's progress and log lines are kept on the row and read with getJob", async () => {
    const q = new Queue("pl1", ctx().conn);
    const { id } = await q.add("work");
    const numbers: number[] = [];
    const worker = new Worker(q, async (job) => {
      await job.progress(10);
      numbers.push(await job.log("started"));
      await job.progress({ done: 2, of: 3 });
      numbers.push(await job.log("nearly there: ünïcode"));
      return "ok";
    });
    await until("completion", async () => (await q.getJob(id))?.state === "completed", 10_000);
    await worker.close();
    const info = await q.getJob(id);
    assert.equal(info?.progress?.toString(), JSON.stringify({ done: 2, of: 3 }));
    assert.deepEqual(info?.logs, ["started", "nearly there: ünïcode"]);
    assert.deepEqual(numbers, [1, 2]);
  });

  test("a job without progress or logs reads as such", async () => {
    const q = new Queue("pl2", ctx().conn);
    const { id } = await q.add("p");
    const info = await q.getJob(id);
    assert.equal(info?.progress, undefined);
    assert.deepEqual(info?.logs, []);
  });

  test("the log keeps the last 100 lines, numbered from 1", async () => {
    const { conn } = ctx();
    const q = new Queue("pl3", conn);
    const { id } = await q.add("p");
    const job = await claim(conn, "pl3", 30_000);
    assert.equal(job?.id, id);
    for (let i = 1; i <= 105; i++) assert.equal(await log(conn, "pl3", id, 1, `line ${i}`), i);
    const logs = (await q.getJob(id))!.logs;
    assert.equal(logs.length, 100);
    assert.equal(logs[0], "line 6");
    assert.equal(logs[99], "line 105");
  });

  test("a stale worker's progress and log are refused with LeaseLostError", async () => {
    const { conn } = ctx();
    const q = new Queue("pl4", conn);
    const { id } = await q.add("p");
    await claim(conn, "pl4", 10);
    await new Promise((r) => setTimeout(r, 30));
    await reap(conn, "pl4", { limit: 10, maxAttempts: 5, keep: 10 });
    const again = await claim(conn, "pl4", 30_000);
    assert.equal(again?.attempts, 2);
    await assert.rejects(progress(conn, "pl4", id, 1, "50"), LeaseLostError);
    await assert.rejects(log(conn, "pl4", id, 1, "late"), LeaseLostError);
    await progress(conn, "pl4", id, 2, "75");
    assert.equal((await q.getJob(id))?.progress?.toString(), "75");
    assert.deepEqual((await q.getJob(id))?.logs, []);
  });

  test("a handler whose lease was lost gets LeaseLostError from progress and log", async () => {
    const q = new Queue("pl5", ctx().conn);
    const { id } = await q.add("p");
    const refused: unknown[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const worker = new Worker(q, async (job) => {
      await held;
      for (const write of [() => job.progress("after the lease"), () => job.log("after the lease")]) {
        try {
          await write();
        } catch (err) {
          refused.push(err);
        }
      }
    });
    worker.on("error", () => {});
    worker.on("leaseLost", () => {});
    await until("the handler to start", () => worker.activeCount === 1, 5000);
    // Someone took the job out of active behind the worker's back: its lease is gone.
    await ctx().conn.send("ZREM", ["emq:{pl5}:active", id]);
    release();
    await until("the refused writes", () => refused.length === 2, 5000);
    await worker.close();
    for (const err of refused) assert.ok(err instanceof LeaseLostError, String(err));
    const lost = `this worker's lease on job ${id} is lost (it left the active set): it can change nothing about the job any more`;
    assert.deepEqual(
      refused.map((e) => (e as Error).message),
      [`progress(): ${lost}`, `log(): ${lost}`],
    );
    assert.equal((refused[0] as LeaseLostError).reply, "ERR EMQ.PROGRESS job is not active");
    assert.equal((await q.getJob(id))?.progress, undefined);
  });

  test("a value JSON cannot carry is refused before anything is sent", async () => {
    const q = new Queue("pl6", ctx().conn);
    await q.add("p");
    let refused: unknown;
    const worker = new Worker(q, async (job) => {
      try {
        await job.progress(10n);
      } catch (err) {
        refused = err;
      }
    });
    await until("the refusal", () => refused !== undefined, 5000);
    await worker.close();
    assert.ok(refused instanceof InvalidArgumentError, String(refused));
  });
});

/**
 * Flow control on a 3-primary Valkey Cluster, both wires: one limited queue's limits live in its
 * slot like its jobs; two workers obey its concurrency and its groups' limits, and the queue
 * drains with its counters back at zero.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type Job, Queue, Worker } from "../src/index.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { until } from "./support/until.js";

forEachClusterWire("flow control on a cluster", (ctx) => {
  test("a limited queue: concurrency 4, groups of 2, two workers; drains, counters at zero", async () => {
    const { conn } = ctx();
    const q = new Queue("fc-limited", conn);
    await q.setLimits({ concurrency: 4, group: { concurrency: 2 } });
    await q.addBulk(
      Array.from({ length: 60 }, (_, i) => ({ payload: `c${i}`, opts: { group: `g${i % 3}` } })),
    );
    let running = 0;
    let most = 0;
    let done = 0;
    const handler = async (_job: Job) => {
      running += 1;
      most = Math.max(most, running);
      await sleep(5);
      running -= 1;
      done += 1;
    };
    const quiet = { logger: { warn: () => {} }, concurrency: 10 };
    const workers = [new Worker(q, handler, quiet), new Worker(q, handler, quiet)];
    await until("60 done", () => done === 60, 30_000);
    await Promise.all(workers.map((w) => w.close()));
    assert.ok(most <= 4, `at most ${most} at once`);
    assert.deepEqual(await q.limits(), { concurrency: 4, group: { concurrency: 2 }, groups: {} });
    const left = await conn.send("EXISTS", ["emq:{fc-limited}:groups"], "emq:{fc-limited}:pending");
    assert.equal(left, 0, "every group's active count back to zero");
  });
});

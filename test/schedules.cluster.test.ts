/**
 * Schedules on a 3-primary cluster, both wires: three queues whose slots are on three different
 * shards each get a 200 ms schedule, run by 3 processes × 2 workers per queue; every queue gets
 * one job per instant (no duplicate, no gap), and the listing and removal work on every shard;
 * a schedule paused on each shard adds no job while its instants pass, and fires again resumed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Queue, Worker } from "../src/index.js";
import { queueKey, slot } from "../src/protocol.js";
import { label } from "./support/cluster-helpers.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { startScheduleChildren, stepsOf } from "./support/schedule-children.js";
import { until } from "./support/until.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachClusterWire("schedules on a cluster", (ctx) => {
  test("queues on three shards: one job per instant each", { timeout: 120_000 }, async () => {
    const { cluster, conn, wire } = ctx();
    // One queue per shard.
    const byShard = new Map<string, string>();
    for (let i = 0; byShard.size < 3; i++) {
      const name = `orbit-${i}`;
      const owner = label(cluster.ownerOf(slot(queueKey(name, ""))));
      if (!byShard.has(owner)) byShard.set(owner, name);
    }
    const queues = [...byShard.values()];
    const children = await startScheduleChildren(3, { nodes: cluster.seeds }, wire, queues);
    try {
      const firsts = new Map<string, number>();
      for (const name of queues) {
        const q = new Queue(name, conn);
        firsts.set(name, (await q.schedule("beat", { everyMs: 200, payload: name })).next);
        assert.deepEqual(
          (await q.schedules()).map((s) => s.name),
          ["beat"],
        );
      }
      await sleep(5000);
      for (const name of queues) assert.equal(await new Queue(name, conn).unschedule("beat"), true);
      await sleep(500);
      for (const name of queues) {
        const ids = children.jobs.get(name)!;
        const steps = stepsOf(name, "beat", ids, firsts.get(name)!, 200);
        assert.ok(ids.length >= 20, `${name}: about 25 instants in 5 s, got ${ids.length}`);
        assert.equal(new Set(ids).size, ids.length, `${name}: no job ran twice`);
        assert.deepEqual(
          steps,
          steps.map((_, k) => k),
          `${name}: every instant from the first, once`,
        );
        assert.deepEqual(await new Queue(name, conn).schedules(), []);
      }
    } finally {
      await children.stop();
    }
  });

  test("a schedule paused on each shard adds no job; resumed, it fires again", {
    timeout: 120_000,
  }, async () => {
    const { cluster, conn } = ctx();
    const byShard = new Map<string, string>();
    for (let i = 0; byShard.size < 3; i++) {
      const name = `hold-${i}`;
      const owner = label(cluster.ownerOf(slot(queueKey(name, ""))));
      if (!byShard.has(owner)) byShard.set(owner, name);
    }
    const queues = [...byShard.values()].map((name) => new Queue(name, conn));
    const workers = queues.map((q) => new Worker(q, async () => {}, { idleCheckMs: 50 }));
    const fired = async (q: Queue) => (await q.schedules())[0]!.fired;
    try {
      for (const q of queues) await q.schedule("beat", { everyMs: 500, payload: q.name });
      for (const q of queues) await until(`${q.name} fired`, async () => (await fired(q)) >= 1, 20_000);
      for (const q of queues) assert.equal(await q.pauseSchedule("beat"), true);
      const held = await Promise.all(queues.map(fired));
      await sleep(2500); // five instants pass on every shard
      assert.deepEqual(await Promise.all(queues.map(fired)), held, "no job while paused");
      for (const q of queues) assert.equal((await q.schedules())[0]!.paused, true);
      for (const q of queues) assert.notEqual((await q.resumeSchedule("beat")).next, null);
      for (const [i, q] of queues.entries()) {
        await until(`${q.name} fired again`, async () => (await fired(q)) >= held[i]! + 1, 20_000);
      }
    } finally {
      await Promise.all(workers.map((w) => w.close()));
    }
  });
});

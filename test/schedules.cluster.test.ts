/**
 * Schedules on a 3-primary cluster, both wires: three queues whose slots are on three different
 * shards each get a 200 ms schedule, run by 3 processes × 2 workers per queue; every queue gets
 * one job per instant (no duplicate, no gap), and the listing and removal work on every shard.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Queue } from "../src/index.js";
import { queueKey, slot } from "../src/protocol.js";
import { label } from "./support/cluster-helpers.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { startScheduleChildren, stepsOf } from "./support/schedule-children.js";

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
});

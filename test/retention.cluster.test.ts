/**
 * Retention by age on a 3-primary cluster, both wires (wire 6's nodes run their own promote and
 * reap timers, which do not sweep by age): a Worker of a queue with 3 lanes spread over the
 * shards deletes, on every lane, the completed jobs finished longer than `age` ago and keeps
 * the newer ones, each lane's `CLEAN` on the node that owns it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Queue, Worker } from "../src/index.js";
import { laneNames } from "../src/lanes/naming.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { cleaned, finished, finishedAgo } from "./support/retention.js";
import { until } from "./support/until.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };
const HOUR = 3_600_000;

forEachClusterWire("retention by age on a cluster", (ctx) => {
  test("every lane swept: the old ones deleted, the newer kept", async () => {
    const { conn } = ctx();
    const q = new Queue("ret-lanes", conn, { lanes: 3 });
    await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: `j${i}` })));
    const w1 = new Worker(q, () => {}, { ...quiet, concurrency: 4 });
    try {
      await until("30 completed", async () => (await q.counts()).completed === 30, 60_000);
    } finally {
      await w1.close();
    }
    const lanes = laneNames("ret-lanes", 3);
    const kept = new Map<string, string[]>();
    let old = 0;
    for (const lane of lanes) {
      const ids = await finished(conn, lane, "done");
      assert.ok(ids.length >= 2, `lane ${lane} holds ${ids.length} jobs`);
      await finishedAgo(conn, lane, "done", ids.slice(0, 1), 2 * HOUR);
      kept.set(lane, ids.slice(1).sort());
      old += 1;
    }
    const w2 = new Worker(q, () => {}, { ...quiet, keepCompleted: { age: HOUR } });
    try {
      await until("one old job per lane deleted", async () => (await q.counts()).completed === 30 - old);
    } finally {
      await w2.close();
    }
    for (const lane of lanes) {
      assert.deepEqual((await finished(conn, lane, "done")).sort(), kept.get(lane), lane);
      assert.deepEqual(await cleaned(conn, lane), ["completed:1"], lane);
    }
  });
});

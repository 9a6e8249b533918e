/**
 * A laned queue on a 3-primary Valkey Cluster, both wires: its 12 lanes land 4 on each shard,
 * a worker drains every lane with no `MOVED` in the steady state, and the operator calls act on
 * every lane wherever it lives.
 */
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type Connection, type Job, type LanedCounts, Queue, Worker } from "../src/index.js";
import { laneNames } from "../src/lanes/naming.js";
import { queueKey, slot } from "../src/protocol.js";
import type { LocalCluster } from "./support/cluster.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { label, movedCount, resetStats } from "./support/cluster-helpers.js";
import { until } from "./support/until.js";

forEachClusterWire("laned queue on a cluster", (ctx) => {
  let cluster: LocalCluster;
  let conn: Connection;
  beforeEach(() => {
    ({ cluster, conn } = ctx());
  });

  test("12 lanes: 4 on each of 3 shards", async () => {
    const perShard = new Map<string, number>();
    for (const lane of laneNames("hot", 12)) {
      const owner = label(cluster.ownerOf(slot(queueKey(lane, ""))));
      perShard.set(owner, (perShard.get(owner) ?? 0) + 1);
    }
    assert.deepEqual([...perShard.values()].sort(), [4, 4, 4]);
  });

  test("a worker drains every lane on every shard; no MOVED; pause and counts across shards", async () => {
    const q = new Queue("hot", conn, { lanes: 12 });
    await resetStats(cluster.primaries());
    await q.addBulk(Array.from({ length: 120 }, (_, i) => ({ payload: `h${i}` })));
    const byLane = new Map<string, number>();
    const worker = new Worker(
      q,
      (job: Job) => {
        byLane.set(job.lane, (byLane.get(job.lane) ?? 0) + 1);
      },
      { concurrency: 8, idleCheckMs: 200, keepCompleted: 1000 },
    );
    await until("120 completed", async () => ((await q.counts()) as LanedCounts).completed === 120, 20_000);
    assert.equal(byLane.size, 12);
    assert.ok(
      [...byLane.values()].every((n) => n === 10),
      JSON.stringify([...byLane]),
    );
    assert.equal(await q.pause(), true);
    await q.add("held");
    await sleep(200);
    const paused = (await q.counts()) as LanedCounts;
    assert.equal(paused.paused, true);
    assert.equal(paused.pending, 1);
    await q.resume();
    await until(
      "the held job ran",
      async () => ((await q.counts()) as LanedCounts).completed === 121,
      20_000,
    );
    await worker.close();
    assert.equal(await movedCount(cluster.primaries()), 0, "every command reached its slot's owner");
  });
});

/**
 * `QueueEvents` on a 3-primary Valkey Cluster, both wires: one queue per shard, each followed by
 * a reader whose every read routes to its queue's slot (no `MOVED` in the steady state), and
 * every event of every job delivered; a gap reported there too.
 */
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import {
  type Connection,
  type EventKind,
  type Gap,
  Queue,
  QueueEvents,
  type Wire,
  Worker,
} from "../src/index.js";
import type { LocalCluster } from "./support/cluster.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { movedCount, queuePerShard, resetStats } from "./support/cluster-helpers.js";
import { until } from "./support/until.js";

forEachClusterWire("QueueEvents on a cluster", (ctx) => {
  let cluster: LocalCluster;
  let conn: Connection;
  let wire: Wire;
  beforeEach(() => {
    ({ cluster, conn, wire } = ctx());
  });

  test("a reader per shard's queue: every event, each read in its queue's slot", async () => {
    const names = queuePerShard(cluster, `ev${wire}-`);
    const readers = names.map((name) => new QueueEvents(name, conn, { blockMs: 500 }));
    const kinds = names.map(() => ({}) as Partial<Record<EventKind, number>>);
    for (const [i, r] of readers.entries()) {
      r.on("event", (e) => {
        kinds[i]![e.kind] = (kinds[i]![e.kind] ?? 0) + 1;
      });
    }
    const gaps: Gap[] = [];
    for (const r of readers) r.on("gap", (g) => gaps.push(g));
    const workers: Worker[] = [];
    try {
      await Promise.all(readers.map((r) => r.ready));
      await resetStats(cluster.primaries());
      for (const name of names) {
        workers.push(new Worker(new Queue(name, conn), () => {}, { concurrency: 20, keepCompleted: 0 }));
      }
      await Promise.all(workers.map((w) => w.ready));
      for (const name of names) {
        await new Queue(name, conn).addBulk(Array.from({ length: 500 }, (_, i) => ({ payload: `p${i}` })));
      }
      await until("every completed event", () => kinds.every((k) => k.completed === 500), 30_000);
    } finally {
      // Closed whatever happened: a reader left open retries for ever and holds the process.
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(readers.map((r) => r.close()));
    }
    for (const k of kinds) assert.deepEqual(k, { added: 500, active: 500, completed: 500 });
    assert.deepEqual(gaps, []);
    assert.equal(await movedCount(cluster.primaries()), 0, "no read was redirected");
  });

  test("a paused reader behind the trim gets its exact gap", async () => {
    const [name] = queuePerShard(cluster, `gap${wire}-`);
    const q = new Queue(name!, conn);
    await q.setEvents({ maxLen: 5 });
    const reader = new QueueEvents(name!, conn, { blockMs: 500 });
    const gaps: Gap[] = [];
    let delivered = 0;
    reader.on("gap", (g) => gaps.push(g));
    reader.on("event", () => delivered++);
    try {
      await reader.ready;
      await q.add("first");
      await until("the first event", () => delivered === 1, 30_000);
      reader.pause();
      await q.addBulk(Array.from({ length: 250 }, (_, i) => ({ payload: `p${i}` })));
      reader.resume();
      await until("the gap", () => gaps.length === 1, 30_000);
      await until("the rest", async () => delivered - 1 + gaps[0]!.missed === 250, 30_000);
    } finally {
      await reader.close();
    }
    assert.equal(gaps[0]!.exact, true);
  });
});

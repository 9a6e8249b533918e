/**
 * `queue.cancel(id)` on a 3-primary Valkey Cluster, both wires (docs/jobs.md, "Cancelling a
 * job"): a queue on each shard, a worker on each whose handler waits on its job's signal. Each
 * running job is cancelled: the cancel answers `active`, the row is dead with the error
 * `cancelled` and its `cancelled` field naming attempt 1; the handler's signal aborts with
 * `JobCancelledError` naming the job; the worker reports `cancelled` once (not `failed`, not
 * `leaseLost`); the bus carries `failed` then `dead` with the reason `cancelled`; nothing is
 * retried; every call went to its queue's slot (no `MOVED`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type BusEvent, JobCancelledError, Queue, QueueEvents, Worker } from "../src/index.js";
import { jobKey } from "../src/keyspace.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { movedCount, queuePerShard, resetStats } from "./support/cluster-helpers.js";
import { awaitsSignal, outcomes } from "./support/cancel.js";
import { until } from "./support/until.js";

const LEASE = { leaseMs: 900, idleCheckMs: 200, promoteEveryMs: 50, reapEveryMs: 100 };

forEachClusterWire("queue.cancel on a cluster", (ctx) => {
  test("a running job on each shard: dead with error cancelled, its signal aborted, cancelled reported once, failed and dead on the bus", {
    timeout: 120_000,
  }, async () => {
    const { cluster, conn, wire } = ctx();
    const names = queuePerShard(cluster, `cancel${wire}-`);
    const runs = names.map((name) => {
      const q = new Queue(name, conn);
      const events = new QueueEvents(name, conn, { blockMs: 500 });
      const bus: BusEvent[] = [];
      events.on("event", (e) => bus.push(e));
      const { seen, handler } = awaitsSignal();
      const worker = new Worker(q, handler, { concurrency: 1, ...LEASE });
      return { name, q, events, bus, seen, worker, got: outcomes(worker) };
    });
    const jobs: { id: string }[] = [];
    try {
      await Promise.all(runs.flatMap((r) => [r.events.ready, r.worker.ready]));
      await resetStats(cluster.primaries());
      for (const r of runs) jobs.push(await r.q.add({ on: r.name }, { maxAttempts: 5 }));
      for (const [i, r] of runs.entries()) {
        const job = jobs[i]!;
        await until(`the handler's start on ${r.name}`, () => r.seen.started.length === 1, 30_000);
        assert.equal(r.seen.started[0]!.id, job.id);
        assert.deepEqual(await r.q.cancel(job.id), { cancelled: true, state: "active" });
        const row = (await r.q.getJob(job.id))!;
        assert.deepEqual([row.state, row.error, row.attempts], ["dead", "cancelled", 1]);
        assert.equal(String(await conn.send("HGET", [jobKey(r.name, job.id), "cancelled"])), "1");
      }
      for (const [i, r] of runs.entries()) {
        const job = jobs[i]!;
        await until(`the cancelled event on ${r.name}`, () => (r.got.cancelled ?? []).length === 1, 30_000);
        const reason = r.seen.reasons[0];
        assert.ok(reason instanceof JobCancelledError, `the signal's reason: ${String(reason)}`);
        assert.equal(reason.jobId, job.id);
        assert.equal(r.got.cancelled![0], reason, "the event carries the signal's reason");
        await until(`the dead event on ${r.name}`, () => r.bus.some((e) => e.kind === "dead"), 30_000);
        assert.deepEqual(
          r.bus.filter((e) => e.jobId === job.id).map((e) => [e.kind, e.reason]),
          [
            ["added", undefined],
            ["active", undefined],
            ["failed", "cancelled"],
            ["dead", "cancelled"],
          ],
        );
      }
      assert.equal(await movedCount(cluster.primaries()), 0, "no call was redirected");
    } finally {
      await Promise.all(runs.map((r) => r.worker.close()));
      await Promise.all(runs.map((r) => r.events.close()));
    }
    for (const [i, r] of runs.entries()) {
      assert.deepEqual(
        r.seen.started.map((j) => j.id),
        [jobs[i]!.id],
        "run once, not retried",
      );
      for (const kind of ["completed", "failed", "retrying", "dead", "leaseLost"]) {
        assert.equal(r.got[kind], undefined, `no ${kind} event on ${r.name}`);
      }
      const counts = await r.q.counts();
      assert.deepEqual([counts.pending, counts.scheduled, counts.active, counts.dead], [0, 0, 0, 1]);
    }
  });
});

/**
 * `queue.cancel(id)` of a job whose worker is frozen (docs/jobs.md, "Cancelling a job": "A worker
 * frozen … when the cancel arrives learns it at its first heartbeat after it resumes; the job was
 * dead from the moment of the cancel, and nothing else is lost"). A worker in a child process
 * (`test/fixtures/lease-process.ts`, lease 1 s, its handler waiting on its signal) is stopped with
 * SIGSTOP while it runs the job; the cancel answers `active` and the job is dead at once. The
 * server's clock is let pass the lease's deadline, so the lease would be reapable had the cancel
 * not ended it: a reap finds nothing, the job is not run again. Thawed (SIGCONT), the worker's
 * handler sees its signal abort with `JobCancelledError` and the worker reports `cancelled` once
 * — not `leaseLost`, not `failed`; the bus holds one `failed` and one `dead`, reason `cancelled`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type BusEvent, Queue, QueueEvents } from "../src/index.js";
import { queueKey } from "../src/keyspace.js";
import { reap } from "../src/protocol.js";
import { type FrozenWorker, startFrozenWorker } from "./support/frozen-worker.js";
import { serverNowMs } from "./support/reliability.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

forEachWire("queue.cancel of a frozen worker's job", (ctx) => {
  test("dead at once; the lease runs out unreaped; thawed, the handler's signal aborts and the worker reports cancelled once", {
    timeout: 120_000,
  }, async () => {
    const { server, wire, conn } = ctx();
    const queue = "cancel-frozen";
    const q = new Queue(queue, conn);
    const events = new QueueEvents(queue, conn);
    const bus: BusEvent[] = [];
    events.on("event", (e) => bus.push(e));
    await events.ready;
    let child: FrozenWorker | undefined;
    try {
      child = await startFrozenWorker({ port: server.port }, wire, queue, "signal");
      const frozen = child;
      const job = await q.add("held", { maxAttempts: 5 });
      const about = () =>
        frozen.lines
          .filter((line) => line.split(" ")[1] === job.id)
          .map((line) => line.replace(` ${job.id}`, ""));
      await until("the child's handler start", () => about().length > 0, 30_000);
      const deadline = Number(await server.cli("ZSCORE", queueKey(queue, "active"), job.id));
      assert.ok(deadline > 0, "the job is active under the child's lease");
      frozen.freeze();

      assert.deepEqual(await q.cancel(job.id), { cancelled: true, state: "active" });
      const row = (await q.getJob(job.id))!;
      assert.deepEqual([row.state, row.error, row.attempts], ["dead", "cancelled", 1]);
      assert.equal(String(await server.cli("HGET", queueKey(queue, `job:${job.id}`), "cancelled")), "1");
      assert.equal(await server.cli("ZSCORE", queueKey(queue, "active"), job.id), null, "out of active");

      // Past the lease's deadline on the server's clock: a live lease would be reaped now.
      await until(
        "the server's clock past the lease's deadline",
        async () => (await serverNowMs(server)) > deadline,
        30_000,
      );
      assert.deepEqual(await reap(conn, queue, { limit: 100, maxAttempts: 5, keep: 100 }), {
        requeued: [],
        dead: [],
      });
      assert.deepEqual(about(), ["start 1"], "nothing from the child while it is stopped");

      frozen.thaw();
      const reported = () => about().some((l) => l.startsWith("cancelled") || l.startsWith("lost"));
      await until("the thawed worker's report of its ended lease", reported, 30_000);
      await frozen.stop(); // closes the worker: every line it would write is written
      assert.deepEqual(about(), ["start 1", "abort JobCancelledError", "cancelled 1 JobCancelledError"]);

      const later = (await q.getJob(job.id))!;
      assert.deepEqual([later.state, later.error, later.attempts], ["dead", "cancelled", 1]);
      const counts = await q.counts();
      assert.deepEqual([counts.pending, counts.scheduled, counts.active, counts.dead], [0, 0, 0, 1]);
      await until("the cancel's dead on the bus", () => bus.some((e) => e.kind === "dead"));
      assert.deepEqual(
        bus.filter((e) => e.jobId === job.id).map((e) => [e.kind, e.reason]),
        [
          ["added", undefined],
          ["active", undefined],
          ["failed", "cancelled"],
          ["dead", "cancelled"],
        ],
      );
    } finally {
      await child?.stop();
      await events.close();
    }
  });
});

/**
 * `add`'s extras on a local 3-primary cluster, both wires: idempotency keys held per queue on
 * whichever shard serves it (the record shares the queue's slot), released by `forgetKey` and by
 * `obliterate` (its scan runs on the queue's node), and a job's timeout failing an attempt; and
 * (wire 6) a worker frozen while its blocking claim was answered does not run the job once thawed
 * (the single-node twin, both wires: `test/lease-expiry.test.ts`); and the job model on a shard
 * (data, name, updateData, UnrecoverableError, waitUntilFinished).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  JobFailedError,
  Queue,
  QueueEvents,
  TimeoutError,
  UnrecoverableError,
  Worker,
} from "../src/index.js";
import { queueKey, slot } from "../src/protocol.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { blockedClients, expiredClaim, startFrozenWorker } from "./support/frozen-worker.js";
import { until } from "./support/until.js";

forEachClusterWire("add extras on a cluster", (ctx) => {
  test("keys held per queue on every shard; forgetKey and obliterate release them", async () => {
    const { conn } = ctx();
    const names = ["ck-a", "ck-b", "ck-c", "ck-d", "ck-e", "ck-f"];
    const slots = new Set(names.map((n) => Math.floor(slot(`emq:{${n}}:pending`) / 5462)));
    assert.ok(slots.size >= 2, "the queues spread over shards");
    for (const name of names) {
      const q = new Queue(name, conn);
      const first = await q.add("a", { key: "order-1" });
      assert.deepEqual(await q.add("b", { key: "order-1" }), { id: first.id, duplicate: true });
      assert.equal(await q.forgetKey("order-1"), true);
      assert.equal((await q.add("c", { key: "order-1" })).duplicate, false);
      await q.add("d", { key: "order-2" });
      await q.obliterate();
      assert.equal(
        (await q.add("e", { key: "order-2" })).duplicate,
        false,
        `${name}: released by obliterate`,
      );
    }
  });

  test("a job's timeout fails its attempt with TimeoutError", async () => {
    const q = new Queue("ck-timeout", ctx().conn);
    const { id } = await q.add("slow", { timeoutMs: 150, maxAttempts: 1 });
    const seen: unknown[] = [];
    const worker = new Worker(
      q,
      (job) =>
        new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason))),
    );
    worker.on("failed", (_job, err) => seen.push(err));
    await until("the job to be dead", async () => (await q.getJob(id))?.state === "dead", 10_000);
    await worker.close();
    assert.ok(seen[0] instanceof TimeoutError, String(seen[0]));
  });

  test("a claim answered while its worker was frozen is handed back, not run (wire 6)", {
    timeout: 120_000,
  }, async (t) => {
    const { wire, cluster, conn } = ctx();
    if (wire !== 6) return t.skip("the blocking claim is wire 6's (wire 4: the single-node test)");
    const queue = "ck-frozen";
    const child = await startFrozenWorker({ nodes: cluster.seeds }, wire, queue);
    try {
      const run = await expiredClaim(conn, queue, child, async (q) => {
        await until(
          "the worker's wait in EMQ.BCLAIM",
          async () => (await blockedClients(conn, queueKey(queue, ""))) > 0,
        );
        child.freeze();
        return (await q.add("once")).id;
      });
      assert.deepEqual(
        run.frozen,
        ["lost 1 LeaseExpiredError"],
        "the frozen worker never started the handler",
      );
      assert.deepEqual(run.second, ["start 2", "end"], "the second worker ran it once");
      assert.deepEqual([run.state, run.attempts], ["completed", 2]);
    } finally {
      await child.stop();
    }
  });

  test("the job model: data, name, a job's own backoff, updateData, UnrecoverableError, waitUntilFinished", async () => {
    const { conn } = ctx();
    const q = new Queue("ck-model", conn);
    const events = new QueueEvents("ck-model", conn);
    await events.ready;
    try {
      const ok = await q.add({ n: 1 }, { name: "double", backoff: { type: "fixed", delayMs: 10 } });
      const bad = await q.add({ n: -1 }, { maxAttempts: 5 });
      await q.updateData(ok.id, { n: 21 });
      assert.equal((await q.getJob(ok.id))?.name, "double");
      const waits = [q.waitUntilFinished(ok.id, events), q.waitUntilFinished(bad.id, events)];
      const worker = new Worker(q, (job) => {
        const { n } = job.data as { n: number };
        if (n < 0) throw new UnrecoverableError("negative");
        return n * 2;
      });
      const [result, failure] = await Promise.allSettled(waits);
      await worker.close();
      assert.deepEqual(result, { status: "fulfilled", value: 42 });
      const err = (failure as PromiseRejectedResult).reason;
      assert.ok(
        err instanceof JobFailedError && err.failedReason === "UnrecoverableError: negative",
        String(err),
      );
      assert.equal((await q.getJob(bad.id))?.attempts, 1);
    } finally {
      await events.close();
    }
  });
});

/**
 * `echomq/bullmq` on a local 3-primary cluster, both wires: a flow whose parent and children live
 * in queues of different slots, processed by BullMQ-shaped workers, watched by a QueueEvents; and
 * the BullMQ app of test/fixtures/bullmq-app.ts, its import changed, reporting on the cluster what
 * it reports on BullMQ (one standalone node, BullMQ's queues being one slot each only there).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { FlowProducer, Queue, QueueEvents, Worker } from "../src/bullmq.js";
import { slot } from "../src/protocol.js";
import { original, ported } from "./support/bullmq-app.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { startValkey } from "./support/valkey.js";
import { until } from "./support/until.js";

/** What the app reports on BullMQ, on a standalone node: read once, compared on each wire. */
let onBullMQ: Promise<Record<string, unknown>> | undefined;
const stops: (() => Promise<void>)[] = [];
before(() => {
  onBullMQ = (async () => {
    const server = await startValkey();
    stops.push(() => server.stop());
    const plain = { host: "127.0.0.1", port: server.port, maxRetriesPerRequest: null };
    return (await original()).runApp(plain, "bullmq");
  })();
});
after(async () => {
  for (const stop of stops) await stop();
});

forEachClusterWire("bullmq on a cluster", (ctx) => {
  test("the BullMQ app, its import changed, reports on the cluster what it reports on BullMQ", async () => {
    const onCluster = await (await ported()).runApp(
      { nodes: ctx().cluster.seeds, wire: ctx().wire },
      "echomq",
    );
    assert.deepEqual(onCluster, await onBullMQ);
    assert.equal(onCluster.welcomed, "sent:ada");
  });

  test("a flow across slots runs; counts and events speak BullMQ's names", async () => {
    const connection = ctx().conn;
    assert.notEqual(slot("emq:{orders}:"), slot("emq:{lines}:"));
    const events = new QueueEvents("orders", { connection });
    await events.waitUntilReady();
    const completed: unknown[] = [];
    events.on("completed", ({ returnvalue }) => completed.push(returnvalue));
    const flows = new FlowProducer({ connection });
    const node = await flows.add({
      name: "order",
      queueName: "orders",
      data: { order: 7 },
      children: [1, 2, 3].map((n) => ({ name: "line", queueName: "lines", data: { n } })),
    });
    const lines = new Worker("lines", async (job) => job.data.n, { connection, concurrency: 3 });
    const orders = new Worker(
      "orders",
      async (job) => Object.values(await job.getChildrenValues<number>()).reduce((a, b) => a + b, 0),
      { connection },
    );
    try {
      await until("the order completed on the bus", () => completed.length === 1, 15_000);
      assert.deepEqual(completed, [6]);
      const queue = new Queue("lines", { connection });
      assert.deepEqual(await queue.getJobCounts("completed", "wait", "failed"), {
        completed: 3,
        wait: 0,
        failed: 0,
      });
      assert.equal(await node.job.getState(), "completed");
    } finally {
      await Promise.all([lines.close(), orders.close(), events.close(), flows.close()]);
    }
  });
});

/**
 * One BullMQ app (test/fixtures/bullmq-app.ts), run as written against BullMQ itself, and with
 * only its import changed (`"bullmq"` → `echomq/bullmq`) against EchoMQ, on both wires: the two
 * runs report the same outcomes — results, states, counts, order, attempts, events. (On a
 * cluster: test/bullmq.cluster.test.ts.)
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { original, ported } from "./support/bullmq-app.js";
import { forEachWire } from "./support/wires.js";

forEachWire("a BullMQ app, its import changed", (ctx) => {
  test("reports what it reports on BullMQ", async () => {
    const { server, wire } = ctx();
    const plain = { host: "127.0.0.1", port: server.port, maxRetriesPerRequest: null };
    const onBullMQ = await (await original()).runApp(plain, "bullmq");
    const onEchoMQ = await (await ported()).runApp({ ...plain, wire }, "echomq");
    assert.deepEqual(onEchoMQ, onBullMQ);
    assert.equal(onEchoMQ.welcomed, "sent:ada");
  });
});

/**
 * A worker's socket names (`CLIENT SETNAME`) for any queue name the grammar allows: the server
 * takes only printable ASCII without spaces, so odd names are escaped — and a worker of a queue
 * named with spaces or non-ASCII characters runs (both wires) and is counted in `CLIENT LIST`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Queue, Worker } from "../src/index.js";
import { listWorkers } from "../src/observe/workers.js";
import { clientNamePart, fromClientNamePart } from "../src/worker/client-name.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const ODD = ["a b", "é", "100%", "tab-free: x/y.z=1@h", "日本語 キュー", "%41", "~!"];

test("client name parts: printable ASCII without spaces, and they read back", () => {
  for (const name of ODD) {
    const part = clientNamePart(name);
    assert.match(part, /^[!-~]+$/, name);
    assert.equal(fromClientNamePart(part), name);
  }
  assert.equal(clientNamePart("plain:q@1"), "plain:q@1");
  assert.equal(clientNamePart("a b"), "a%20b");
  assert.equal(clientNamePart("50%"), "50%25");
  assert.equal(clientNamePart("é"), "%C3%A9");
});

forEachWire("workers of queues with odd names", (ctx) => {
  test("a worker of a queue named with spaces and non-ASCII runs, named so CLIENT LIST counts it", async () => {
    const name = "orders é 42";
    const q = new Queue(name, ctx().conn);
    const { id } = await q.add("p");
    const warnings: string[] = [];
    const logger = { warn: (msg: string, err?: unknown) => warnings.push(`${msg}: ${String(err)}`) };
    const worker = new Worker(q, async () => "done", { logger });
    await until("the job to complete", async () => (await q.getJob(id))?.state === "completed", 10_000);
    const { id: second } = await q.add("p");
    await until(
      "a second job to complete",
      async () => (await q.getJob(second))?.state === "completed",
      10_000,
    );
    const clients = String(await ctx().conn.send("CLIENT", ["LIST"]));
    assert.match(clients, / name=emq-wake-orders%20%C3%A9%2042%;\S+ /);
    // Every socket the worker opened took its name: none was refused by CLIENT SETNAME.
    assert.deepEqual(warnings, []);
    assert.deepEqual(
      (await listWorkers(ctx().conn)).map((w) => [w.queue, w.pid]),
      [[name, process.pid]],
    );
    await worker.close();
  });
});

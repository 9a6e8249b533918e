/**
 * Queue discovery (`listQueues`, a bounded SCAN of every primary) on one node and on a cluster:
 * every queue found by its sets or meta, lanes grouped under their queue, job rows alone and
 * other keys ignored, and the bound (`maxKeys`) reported as an incomplete scan.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { idTime, claim, fail, promote } from "../src/protocol.js";
import { connect, type Connection, FlowProducer, Metrics, Queue } from "../src/index.js";
import { listQueues } from "../src/admin.js";
import { parseQueueKey, queueExists, queueOfPhysical } from "../src/operate/discover.js";
import { laneNames } from "../src/lanes/naming.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

describe("discovery, pure parts", () => {
  test("a queue key's name and type; other keys are none", () => {
    assert.deepEqual(parseQueueKey("emq:{orders}:pending"), { name: "orders", type: "pending" });
    assert.deepEqual(parseQueueKey("emq:{a b}:job:JOB1"), { name: "a b", type: "job:JOB1" });
    assert.equal(parseQueueKey("emq:orders:pending"), null);
    assert.equal(parseQueueKey("other"), null);
  });

  test("a lane maps to its queue only when the naming rule made it", () => {
    const lane = laneNames("hot", 4)[2]!;
    assert.equal(queueOfPhysical(lane), "hot");
    assert.equal(queueOfPhysical("hot@4.2.999999"), "hot@4.2.999999");
    assert.equal(queueOfPhysical("plain"), "plain");
  });
});

describe("discovery on one node", () => {
  let server: ValkeyServer;
  let conn: Connection;
  before(async () => {
    server = await startValkey();
    conn = await connect({ port: server.port });
  });
  after(async () => {
    await conn?.close();
    await server?.stop();
  });

  test("queues by their sets or meta, lanes grouped, sorted; stray keys ignored", async () => {
    await new Queue("b-plain", conn).add("x");
    await new Queue("a-paused", conn).pause();
    await new Queue("c-laned", conn, { lanes: 3 }).addBulk([
      { payload: "1" },
      { payload: "2" },
      { payload: "3" },
    ]);
    await server.cli("HSET", "emq:{rows-only}:job:JOB00000000001", "state", "pending");
    await server.cli("SET", "unrelated", "1");
    const found = await listQueues(conn);
    assert.equal(found.complete, true);
    assert.deepEqual(
      found.queues.map((q) => [q.name, q.physical.length]),
      [
        ["a-paused", 1],
        ["b-plain", 1],
        ["c-laned", 4],
      ],
    );
    assert.ok(found.scanned >= 8);
  });

  test("the bound: a scan stopped at maxKeys says it is incomplete", async () => {
    await new Queue("many", conn).addBulk(Array.from({ length: 3000 }, (_, i) => ({ payload: `${i}` })));
    const found = await listQueues(conn, { maxKeys: 1000 });
    assert.equal(found.complete, false);
    assert.ok(found.scanned >= 1000 && found.scanned < 3000, `scanned ${found.scanned}`);
  });
});

describe("discovery on a cluster", () => {
  let cluster: LocalCluster;
  let conn: Connection;
  before(async () => {
    cluster = await startCluster({ primaries: 3 });
    conn = await connect({ nodes: cluster.seeds });
  });
  after(async () => {
    await conn?.close();
    await cluster?.stop();
  });

  test("every primary is scanned; lanes on every shard grouped under their queue", async () => {
    const names = ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"];
    for (const n of names) await new Queue(n, conn).add("x");
    await new Queue("spread", conn, { lanes: 6 }).addBulk(
      Array.from({ length: 6 }, () => ({ payload: "s" })),
    );
    const found = await listQueues(conn);
    assert.equal(found.complete, true);
    assert.deepEqual(
      found.queues.map((q) => q.name),
      [...names, "spread"],
    );
    assert.equal(found.queues.at(-1)!.physical.length, 7);
  });

  test("a queue holding only a waiting flow parent is found; queueExists answers on its shard", async () => {
    await new FlowProducer(conn).add({
      queue: "w-only",
      payload: "parent",
      children: [{ queue: "w-kids", payload: "child" }],
    });
    const names = (await listQueues(conn)).queues.map((q) => q.name);
    assert.ok(names.includes("w-only"), `found: ${names.join(", ")}`);
    assert.equal(await queueExists(conn, "w-only"), true);
    assert.equal(await queueExists(conn, "w-typo"), false);
  });

  test("latency on a cluster: a retried old job reads its time since promotion, not its age", async () => {
    const { id } = await new Queue("w-lat", conn).add("old");
    await sleep(1000);
    const job = await claim(conn, "w-lat", 30_000);
    await fail(conn, "w-lat", id, job!.attempts, "boom", { backoffMs: 20, maxAttempts: 3, keep: 10 });
    await sleep(60);
    const promotedFrom = Date.now();
    assert.equal(await promote(conn, "w-lat", 10), 1);
    const text = await new Metrics(conn, { queues: ["w-lat"] }).text();
    const scrapedTo = Date.now();
    const latency = Number(/^echomq_queue_latency_seconds\{queue="w-lat"\} (\S+)$/m.exec(text)?.[1]);
    assert.ok(latency <= (scrapedTo - promotedFrom + 1) / 1000, `latency ${latency} s, since promotion`);
    assert.ok(latency < (promotedFrom - idTime(id)) / 1000, `latency ${latency} s, less than its age`);
  });
});

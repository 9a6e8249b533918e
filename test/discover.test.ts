/**
 * Queue discovery (`listQueues`, a bounded SCAN of every primary) on one node and on a cluster:
 * every queue found by its sets or meta, lanes grouped under their queue, job rows alone and
 * other keys ignored, and the bound (`maxKeys`) reported as an incomplete scan.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect, type Connection, listQueues, Queue } from "../src/index.js";
import { parseQueueKey, queueOfPhysical } from "../src/operate/discover.js";
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
});

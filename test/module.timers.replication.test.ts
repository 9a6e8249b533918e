/**
 * The module's own timers across nodes: a replica keeps its index and never ticks, and its
 * keyspace follows the primary's ticks (plain commands); after a failover the new primary
 * carries on; after a restart the AOF load re-arms them; on a cluster each shard's primary
 * promotes its own queues.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { connect, Queue } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { queuePerShard } from "./support/cluster-helpers.js";
import { dumpAll, k, replicated, row } from "./support/module.js";
import { timerStats } from "./support/timers.js";
import { until } from "./support/until.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

/** Every AOF file of `server`, as one text. */
function aofText(server: ValkeyServer): string {
  const dir = join(server.dir, "appendonlydir");
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "latin1"))
    .join("\n");
}

/** A branded module primary and its module replica (synced). */
async function primaryAndReplica(o: {
  aof: boolean;
}): Promise<{ primary: ValkeyServer; replica: ValkeyServer }> {
  const primary = await startValkey({ module: modulePath(), aof: o.aof });
  const replicaOf = { host: "127.0.0.1", port: primary.port };
  const replica = await startValkey({ module: modulePath(), replicaOf });
  await installModuleBrand({ port: primary.port });
  return { primary, replica };
}

async function stateOf(server: { cli: ValkeyServer["cli"] }, q: string, id: string): Promise<string> {
  return String(await server.cli("HGET", row(q, id), "state"));
}

describe("server timers: a replica idles, the primary's ticks reach it", () => {
  let primary: ValkeyServer;
  let replica: ValkeyServer;
  before(async () => {
    ({ primary, replica } = await primaryAndReplica({ aof: true }));
  });
  after(async () => {
    await replica.stop();
    await primary.stop();
  });

  test("the replica never ticks; it knows the queue and holds the primary's state", async () => {
    const conn = await connect({ port: primary.port, wire: 6 });
    try {
      const { id } = await new Queue("rep", conn).add("x", { delay: 30 });
      await until("promoted on the primary", async () => (await stateOf(primary, "rep", id)) === "pending");
      await replicated(primary, replica);
      assert.equal(await stateOf(replica, "rep", id), "pending", "the tick's writes replicated");
      assert.deepEqual(await dumpAll(replica.port), await dumpAll(primary.port));
      const onReplica = await timerStats(replica);
      assert.equal(onReplica.running, 0);
      assert.equal(onReplica.ticks, 0, "a replica runs no tick");
      assert.ok(onReplica.queues >= 1, "it keeps the queue in its index (from the replicated writes)");
      assert.ok((await timerStats(primary)).ticks > 0);
    } finally {
      await conn.close();
    }
  });

  test("the AOF holds the tick's plain commands (no EMQ.*); a restart re-arms the timers", async () => {
    const conn = await connect({ port: primary.port, wire: 6 });
    const { id } = await new Queue("aof", conn).add("x", { delay: 1500 });
    await conn.close();
    await replica.stop();
    await primary.restart();
    assert.equal(await stateOf(primary, "aof", id), "scheduled");
    await until(
      "promoted after the reload",
      async () => (await stateOf(primary, "aof", id)) === "pending",
      5000,
    );
    const stats = await timerStats(primary);
    assert.equal(stats.running, 1);
    assert.ok(stats.promoted >= 1, "this process promoted it");
    await until("the tick's writes in the AOF", async () => aofText(primary).includes("promoted"), 3000);
    const aof = aofText(primary);
    assert.doesNotMatch(aof, /emq\./i, "no EMQ.* record in the AOF");
    assert.match(aof, /\r\nZREM\r\n\$\d+\r\nemq:\{aof\}:schedule\r\n/, "the promotion logged as ZREM …");
  });
});

describe("server timers: failover", () => {
  let primary: ValkeyServer;
  let replica: ValkeyServer;
  before(async () => {
    ({ primary, replica } = await primaryAndReplica({ aof: false }));
  });
  after(async () => {
    await replica.stop();
    await primary.stop();
  });

  test("REPLICAOF NO ONE: the new primary promotes the jobs due after the failover", async () => {
    const conn = await connect({ port: primary.port, wire: 6 });
    const q = new Queue("fo", conn);
    const { id: soon } = await q.add("soon", { delay: 20 });
    const { id: later } = await q.add("later", { delay: 1200 });
    await until(
      "the first promoted by the old primary",
      async () => (await stateOf(primary, "fo", soon)) === "pending",
    );
    await replicated(primary, replica);
    await conn.close();
    await primary.crash();
    assert.equal((await timerStats(replica)).ticks, 0);
    await replica.cli("REPLICAOF", "NO", "ONE");
    assert.equal(await stateOf(replica, "fo", later), "scheduled");
    await until(
      "the new primary promotes",
      async () => (await stateOf(replica, "fo", later)) === "pending",
      5000,
    );
    const stats = await timerStats(replica);
    assert.equal(stats.running, 1);
    assert.ok(stats.promoted >= 1);
    assert.equal(Number(await replica.cli("ZSCORE", k("fo", "pending"), later)), 0);
  });
});

describe("server timers on the local cluster", () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await startCluster({ module: modulePath() });
    assert.equal(await installModuleBrand({ nodes: cluster.seeds }), 1);
  });
  after(() => cluster.stop());

  test("each shard's primary promotes its own queues", async () => {
    const conn = await connect({ nodes: cluster.seeds, wire: 6 });
    try {
      const names = queuePerShard(cluster, "tick");
      const ids = await Promise.all(
        names.map(async (name) => (await new Queue(name, conn).add("x", { delay: 30 })).id),
      );
      const primaries = cluster.primaries();
      for (const [i, name] of names.entries()) {
        const owner = primaries[i]!;
        await until(
          `${name} promoted on its shard`,
          async () => (await stateOf(owner, name, ids[i]!)) === "pending",
        );
      }
      for (const node of primaries) {
        const stats = await timerStats(node);
        assert.equal(stats.running, 1);
        assert.ok(stats.promoted >= 1, `${node.port} promoted its queue`);
      }
    } finally {
      await conn.close();
    }
  });
});

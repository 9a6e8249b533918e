/**
 * The local cluster (tools/local-cluster.ts, re-exported by test/support/cluster.ts): it forms
 * (every node cluster_state:ok, knowing every node; replicas synced and listed in CLUSTER SLOTS),
 * its topology answers where a slot lives, `reshard` moves the lowest slots of a primary with
 * their keys (valkey-cli), and stop() ends every node's process.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { slot } from "../src/keyspace.js";
import { type ClusterNode, parseClusterNodes, startCluster } from "./support/cluster.js";
import { queueInSlot } from "./support/cluster-helpers.js";
import { V } from "./support/module.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("startCluster", () => {
  test("3 primaries with a replica each: every slot served once, replicas synced, the owner of a slot takes its keys, reshard moves the lowest slots with their keys, stop() ends every process", async () => {
    const cluster = await startCluster({ primaries: 3, replicas: 1 });
    const pids = cluster.nodes.map((n) => n.pid);
    try {
      assert.equal(cluster.nodes.length, 6);
      assert.equal(cluster.primaries().length, 3);
      assert.equal(cluster.replicas().length, 3);
      assert.deepEqual(
        cluster.seeds,
        cluster.nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
      );
      const ranges = cluster
        .primaries()
        .flatMap((p) => p.slots)
        .toSorted((a, b) => a[0] - b[0]);
      let next = 0;
      for (const [lo, hi] of ranges) {
        assert.equal(lo, next, "the ranges follow each other");
        next = hi + 1;
      }
      assert.equal(next, 16384, "every slot is served");
      for (const primary of cluster.primaries()) {
        const [replica] = cluster.replicas(primary);
        assert.ok(replica, `${primary.port} has a replica`);
        assert.equal(replica.primaryId, primary.id);
        assert.match(String(await replica.cli("INFO", "replication")), /master_link_status:up/);
      }
      const key = V;
      assert.equal(slot(key), 9051);
      assert.equal(await cluster.ownerOf(9051).cli("CLUSTER", "KEYSLOT", key), 9051);
      assert.equal(await cluster.ownerOf(9051).cli("SET", key, "x"), "OK");
      for (const other of cluster.primaries().filter((p) => p !== cluster.ownerOf(9051))) {
        await assert.rejects(other.cli("GET", key), {
          message: new RegExp(`^MOVED 9051 127\\.0\\.0\\.1:${cluster.ownerOf(9051).port}$`),
        });
      }
      assert.throws(() => cluster.ownerOf(16384), RangeError);
      for (const range of (await cluster.nodes[0]!.cli("CLUSTER", "SLOTS")) as unknown[][]) {
        assert.equal(range.length, 4, "each range lists its primary and its replica");
      }

      // valkey-cli --cluster reshard: the lowest slots of `from`, their keys with them.
      const [from, to] = cluster.primaries() as [ClusterNode, ClusterNode];
      const lowest = from.slots[0]![0];
      const moving = queueInSlot(lowest + 1, "moving-");
      await from.cli("SET", moving, "v");
      assert.deepEqual(await cluster.reshard(from, to, 2), [lowest, lowest + 1]);
      assert.equal(cluster.ownerOf(lowest + 1), to);
      assert.equal(await to.cli("GET", moving), "v");
      assert.equal(from.slots[0]![0], lowest + 2);
    } finally {
      await cluster.stop();
    }
    assert.deepEqual(
      pids.filter((pid) => alive(pid)),
      [],
      "no node process left",
    );
  });

  test("fewer than 3 primaries, or a negative replica count, is refused before any node starts", async () => {
    await assert.rejects(startCluster({ primaries: 2 }), RangeError);
    await assert.rejects(startCluster({ replicas: -1 }), RangeError);
  });

  test("CLUSTER NODES lines: address, role, slots (migrating slots left out), primary", () => {
    const text = [
      "aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 7000 [5461->-bbb]",
      "bbb 127.0.0.1:7001@17001,host.example master - 0 0 2 connected 5461-16383",
      "ccc 127.0.0.1:7002@17002 slave aaa 0 0 1 connected",
    ].join("\n");
    const places = parseClusterNodes(text);
    assert.deepEqual(places.get("127.0.0.1:7000"), {
      id: "aaa",
      role: "primary",
      slots: [
        [0, 5460],
        [7000, 7000],
      ],
      primaryId: undefined,
      flags: ["myself", "master"],
    });
    assert.equal(places.get("127.0.0.1:7001")?.slots.length, 1);
    assert.deepEqual(places.get("127.0.0.1:7002"), {
      id: "ccc",
      role: "replica",
      slots: [],
      primaryId: "aaa",
      flags: ["slave"],
    });
  });
});

/**
 * Connecting to a Valkey Cluster (docs/cluster.md): every node socket passes the node fence after
 * its boot commands and before anything else; the intent record is claimed once; a mixed cluster
 * is refused at connect on both wires, naming the node, and stops the whole client; a command in
 * flight on a node connection that dropped is not re-sent; durability on a shard with no
 * replica. Two small clusters, three primaries each: one plain, one with the module on one node.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Cluster } from "iovalkey";
import {
  ConnectionError,
  ConnectionLostError,
  connect,
  InvalidArgumentError,
  DurabilityError,
  Queue,
  ServerError,
  VersionFenceError,
} from "../src/index.js";
import { jobKey, newId } from "../src/protocol.js";
import { modulePath } from "../tools/module-path.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { errorstats, label, queueOn, queuePerShard, resetStats } from "./support/cluster-helpers.js";
import { monitor } from "./support/monitor.js";
import { startProxy } from "./support/proxy.js";
import { freePort } from "./support/valkey.js";
import { V, WIRE4 } from "./support/module.js";

let plain: LocalCluster;
let mixed: LocalCluster;

before(async () => {
  [plain, mixed] = await Promise.all([
    startCluster({ primaries: 3 }),
    startCluster({ primaries: 3, module: (i) => (i === 2 ? modulePath() : undefined) }),
  ]);
});
after(async () => {
  await Promise.all([plain?.stop(), mixed?.stop()]);
});

/** Connections named `name` that a node still has open. */
async function openNamed(nodes: LocalCluster["nodes"], name: string): Promise<number> {
  let n = 0;
  for (const node of nodes)
    n += (String(await node.cli("CLIENT", "LIST")).match(new RegExp(` name=${name} `, "g")) ?? []).length;
  return n;
}

describe("cluster connect: the fence on every node socket", () => {
  test("wire 4: each node socket runs its boot commands, then EMQ.VERSION, before anything else; the intent record is claimed once", async () => {
    // Every node behind a proxy that records what each socket carries (MONITOR never shows an
    // unknown command, so it cannot see the wire-4 fence).
    const proxies = await Promise.all(plain.primaries().map((p) => startProxy({ targetPort: p.port })));
    const natMap = Object.fromEntries(
      plain.primaries().map((p, i) => [label(p), { host: "127.0.0.1", port: proxies[i]!.port }]),
    );
    const mons = await Promise.all(plain.primaries().map((p) => monitor(p.port)));
    const conn = await connect({
      nodes: [natMap[label(plain.primaries()[0]!)]!],
      natMap,
      name: "emq-cl-fence",
    });
    try {
      assert.equal(conn.cluster, true);
      for (const q of queuePerShard(plain, "fence-")) await new Queue(q, conn).add("x");
      assert.deepEqual([...conn.fencedNodes.keys()].sort(), proxies.map((p) => `${p.host}:${p.port}`).sort());
      for (const [i, proxy] of proxies.entries()) {
        const sockets = new Set(proxy.commands.map((c) => c.conn));
        assert.ok(sockets.size >= 1, `node ${label(plain.primaries()[i]!)}: a socket of ours`);
        for (const socket of sockets) {
          const [boot, fence, next] = proxy.commandsOf(socket);
          assert.deepEqual(boot, ["CLIENT", "SETNAME", "emq-cl-fence"], "the boot command first");
          assert.deepEqual(fence, ["EMQ.VERSION"], "then the fence");
          assert.ok(next, "and only then anything else");
        }
      }
      // The intent record: read, claimed with SET NX, read back — once, on its owner only.
      await sleep(50);
      const owner = plain.ownerOf(9051);
      const intent = mons.map((m) => m.commands().filter((c) => c[1] === V));
      for (const [i, commands] of intent.entries()) {
        const expected = plain.primaries()[i] === owner ? ["GET", "SET", "GET"] : [];
        assert.deepEqual(
          commands.map((c) => c[0]?.toUpperCase()),
          expected,
        );
      }
      assert.equal(String(await owner.cli("GET", V)), WIRE4);
    } finally {
      await Promise.all(mons.map((m) => m.stop()));
      await conn.close();
      await Promise.all(proxies.map((p) => p.close()));
    }
  });

  test("NOSCRIPT: each shard that lacks the script loads it once, on that node, and the line is sent again", async () => {
    const conn = await connect({ nodes: plain.seeds });
    try {
      const names = queuePerShard(plain, "noscript-");
      for (const p of plain.primaries()) await p.cli("SCRIPT", "FLUSH");
      await resetStats(plain.primaries());
      const batch = names.flatMap((name) => [0, 1, 2].map((i) => new Queue(name, conn).add(`p${i}`)));
      await Promise.all(batch); // three adds per shard at once: one load per shard
      for (const [i, p] of plain.primaries().entries()) {
        const stats = await errorstats(p);
        assert.equal(stats.NOSCRIPT, 3, `${label(p)}: the three lines met NOSCRIPT`);
        const loads = String(await p.cli("INFO", "commandstats")).match(
          /cmdstat_script\|load:calls=(\d+)/,
        )?.[1];
        assert.equal(loads, "1", `${label(p)}: loaded once`);
        assert.equal(Number(await p.cli("ZCARD", `emq:{${names[i]}}:pending`)), 3);
      }
    } finally {
      await conn.close();
    }
  });

  test("wire 6 on a cluster without the module: refused at connect, naming a node", async () => {
    const err = await connect({ nodes: plain.seeds, wire: 6 }).then(
      () => assert.fail("connected"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof VersionFenceError, String(err));
    assert.equal(err.got, "no module");
    assert.ok(plain.nodes.map(label).includes(err.node!), `names a node: ${err.message}`);
    assert.match(err.message, /^version fence at 127\.0\.0\.1:\d+: /);
  });

  for (const wire of [4, 6] as const) {
    test(`a mixed cluster (the module on one of three nodes) is refused at connect on wire ${wire}, naming the node; nothing stays connected`, async () => {
      const moduleNode = label(mixed.primaries()[2]!);
      const name = `emq-mixed-${wire}`;
      const err = await connect({ nodes: mixed.seeds, wire, name }).then(
        () => assert.fail("connected"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof VersionFenceError, String(err));
      if (wire === 4) {
        assert.equal(err.node, moduleNode, err.message);
        assert.match(err.message, /found the echomq module/);
      } else {
        assert.notEqual(err.node, moduleNode, err.message);
        assert.ok(mixed.primaries().map(label).includes(err.node!), err.message);
      }
      await sleep(300); // a client that kept reconnecting would have sockets open again by now
      assert.equal(await openNamed(mixed.nodes, name), 0, "every node socket closed");
    });
  }
});

describe("cluster connect: options and unreachable seeds", () => {
  test("nodes with host/port, a db other than 0, or a bad node are refused before any socket opens", async () => {
    const nodes = [{ host: "127.0.0.1", port: 1 }];
    const bad: [object, string][] = [
      [{ nodes, port: 6379 }, "nodes"],
      [{ nodes, db: 1 }, "db"],
      [{ nodes: [] }, "nodes"],
      [{ nodes: [{ host: "127.0.0.1", port: 0 }] }, "nodes[0].port"],
      [{ nodes, natMap: { "127.0.0.1:1": { host: "" } } }, 'natMap["127.0.0.1:1"]'],
    ];
    for (const [options, argument] of bad) {
      await assert.rejects(
        connect(options),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === argument,
        argument,
      );
    }
  });

  test("no seed answers: ConnectionError naming the seeds, within connectTimeoutMs", async () => {
    const port = await freePort();
    const t0 = Date.now();
    await assert.rejects(
      connect({ nodes: [{ host: "127.0.0.1", port }], connectTimeoutMs: 500 }),
      (e: unknown) =>
        e instanceof ConnectionError &&
        e.message.startsWith(`cannot reach the valkey cluster at 127.0.0.1:${port}`),
    );
    assert.ok(Date.now() - t0 < 1500, `gave up after ${Date.now() - t0} ms`);
  });
});

describe("cluster connect: nothing that may have run is sent again", () => {
  test("an EVALSHA swallowed in flight on one node's connection fails with ConnectionLostError and is never re-sent; the next call opens a new fenced socket", async () => {
    const [victim, seed] = [plain.primaries()[1]!, plain.primaries()[0]!];
    const proxy = await startProxy({ targetPort: victim.port });
    const natMap = { [label(victim)]: { host: proxy.host, port: proxy.port } };
    const conn = await connect({ nodes: [{ host: seed.host, port: seed.port }], natMap });
    try {
      const q = new Queue(queueOn(victim, "inflight-"), conn);
      await q.add("warm"); // loads the script on the victim
      const id = newId();
      const swallowed = proxy.swallowNext((a) => a[0]?.toUpperCase() === "EVALSHA" && a.includes(id));
      await assert.rejects(q.add("lost", { id }), ConnectionLostError);
      await swallowed;
      await sleep(400); // iovalkey's failover retry would have re-sent it after 100 ms
      const sent = proxy.since(0, true).filter((c) => c.args.includes(id));
      assert.equal(sent.length, 1, "sent once");
      assert.equal(sent[0]!.forwarded, false, "and it never reached the server");
      assert.deepEqual(await victim.cli("HGETALL", jobKey(q.name, id)), []);
      await q.add("again");
      assert.equal(conn.fencedNodes.get(`${proxy.host}:${proxy.port}`), 2, "a new socket, fenced");
    } finally {
      await conn.close();
      await proxy.close();
    }
  });

  test("control: iovalkey's Cluster with its default retryDelayOnFailover does send such a command again", async () => {
    const [victim, seed] = [plain.primaries()[1]!, plain.primaries()[0]!];
    const proxy = await startProxy({ targetPort: victim.port });
    const client = new Cluster([{ host: seed.host, port: seed.port }], {
      natMap: { [label(victim)]: { host: proxy.host, port: proxy.port } },
      redisOptions: { maxRetriesPerRequest: 0 },
    });
    client.on("error", () => {});
    try {
      const key = queueOn(victim, "control-");
      await client.set(key, "warm");
      const swallowed = proxy.swallowNext((a) => a[0] === "set" && a[2] === "resent");
      await client.set(key, "resent").catch(() => {});
      await swallowed;
      await sleep(200);
      const sent = proxy.since(0, true).filter((c) => c.args[2] === "resent");
      assert.equal(sent.length, 2, "swallowed once, then re-sent by the client");
      assert.equal(String(await victim.cli("GET", key)), "resent");
    } finally {
      client.disconnect();
      await proxy.close();
    }
  });
});

describe("cluster durability on a shard with no replica", () => {
  test("WAIT 1 falls short: DurabilityError with the ids, the jobs exist; WAIT 0 passes; WAITAOF local without appendonly refused", async () => {
    const conn = await connect({ nodes: plain.seeds });
    try {
      const shard = plain.primaries()[2]!;
      const q = new Queue(queueOn(shard, "durable-"), conn);
      const one = { replicas: 1, timeoutMs: 50 };
      const err = await q.add("a", { durability: one }).then(
        () => assert.fail("acknowledged"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof DurabilityError, String(err));
      assert.equal(err.ids.length, 1);
      assert.match(err.message, /WAIT 1 50: 0 of 1 replicas acknowledged within 50 ms/);
      assert.equal(String(await shard.cli("HGET", jobKey(q.name, err.ids[0]!), "state")), "pending");

      await q.add("b", { durability: { replicas: 0, timeoutMs: 50 } });
      const bulk = new Queue(q.name, conn, { durability: one });
      const bulkErr = await bulk.addBulk([{ payload: "c" }, { payload: "d" }]).then(
        () => assert.fail("acknowledged"),
        (e: unknown) => e,
      );
      assert.ok(bulkErr instanceof DurabilityError && bulkErr.ids.length === 2, String(bulkErr));

      const aof = { aof: { local: true, replicas: 0 }, timeoutMs: 50 };
      const aofErr = await q.add("e", { durability: aof }).then(
        () => assert.fail("acknowledged"),
        (e: unknown) => e,
      );
      assert.ok(aofErr instanceof DurabilityError, String(aofErr));
      assert.ok(aofErr.cause instanceof ServerError, "the server's refusal is the cause");
      assert.equal(Number(await shard.cli("ZCARD", `emq:{${q.name}}:pending`)), 5);
    } finally {
      await conn.close();
    }
  });
});

/**
 * Both executors on a real Valkey Cluster (test/support/cluster.ts), at the wire: the native
 * fence passes by the node's configuration on every shard, whatever the brand key holds and
 * without reading it (a user with no grant on it passes); `EMQ.INSTALL` still goes to the
 * record's owner; and the wake, from a script or a verb, reaches the shard subscribers of the
 * queue's slot — on its primary and, over the cluster bus, once on its replica — and no other
 * shard, never the AOF.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "iovalkey";
import { modulePath } from "../tools/module-path.js";
import { jobKey, keyOf, queueKey, slot } from "../src/keyspace.js";
import { scriptFor } from "../src/scripts/index.js";
import { VERBS, type Verb } from "../harness/verbs.js";
import { type ClusterNode, type LocalCluster, startCluster } from "./support/cluster.js";
import { type RespArg, rawCommand, rawCommands } from "./support/resp.js";
import { startValkey } from "./support/valkey.js";
import { until } from "./support/until.js";
import { V, WIRE4, WIRE6 } from "./support/module.js";

const J1 = "JOB00000000001";

/** The tail of a call of `verb` on queue `q` that passes shape and layout (values "1", the id first). */
function tailOf(verb: Verb, q: string): RespArg[] {
  const values = verb.values.map((_, i) => (i === 0 && verb.keys.includes("row") ? J1 : "1"));
  const keys = verb.keys.map((s) => (s === "row" ? jobKey(q, J1) : keyOf(q, s)));
  return [keys.length, ...keys, ...values];
}

/** A queue name whose slot `node` serves (`q0`, `q1`, … the first that fits). */
function queueOn(cluster: LocalCluster, node: ClusterNode, prefix = "q"): string {
  for (let i = 0; ; i++) {
    if (cluster.ownerOf(slot(`${prefix}${i}`)) === node) return `${prefix}${i}`;
  }
}

/** Shard-subscribes on `port` to `channel`; `plain` also SUBSCRIBEs it on a second socket. */
async function shardListener(port: number, channel: string) {
  const shard: string[] = [];
  const plain: string[] = [];
  const s = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 });
  const p = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 });
  for (const c of [s, p]) {
    c.on("error", () => {});
    await c.connect();
  }
  s.on("smessage", (_c: string, m: string) => shard.push(m));
  p.on("message", (_c: string, m: string) => plain.push(m));
  await s.ssubscribe(channel);
  await p.subscribe(channel);
  return {
    shard,
    plain,
    close: () => {
      s.disconnect();
      p.disconnect();
    },
  };
}

type Listener = Awaited<ReturnType<typeof shardListener>>;

/**
 * Waits (up to 15 s: a loaded CI's cluster bus can lag) until the owner's and the replica's shard
 * listeners have each heard the wake, then a little longer, so a duplicate, if any, has arrived;
 * a timeout says how many each heard.
 */
async function wakeHeard(onOwner: Listener, onReplica: Listener): Promise<void> {
  await until(
    () => `the wake (heard on the owner: ${onOwner.shard.length}, on its replica: ${onReplica.shard.length})`,
    () => onOwner.shard.length >= 1 && onReplica.shard.length >= 1,
    15_000,
  );
  await sleep(100);
}

function aofText(node: ClusterNode): string {
  const dir = join(node.dir, "appendonlydir");
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f)).toString("latin1"))
    .join("");
}

describe("the native executor on a cluster (3 module primaries, a replica each)", () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 1, module: modulePath(), aof: true });
  });
  after(async () => {
    await cluster?.stop();
  });

  test(`the fence passes by configuration on every shard: ${V} absent, ${WIRE4}, a hash`, async () => {
    const record = cluster.ownerOf(slot(V));
    for (const brand of [null, WIRE4, "hash"] as const) {
      await record.cli("DEL", V);
      if (brand === "hash") await record.cli("HSET", V, "f", "v");
      else if (brand !== null) await record.cli("SET", V, brand);
      for (const primary of cluster.primaries()) {
        const q = queueOn(cluster, primary, `fence-${brand ?? "absent"}-`);
        const replies = await rawCommands(
          primary.port,
          VERBS.map((verb) => [`EMQ.${verb.verb}`, ...tailOf(verb, q)]),
        );
        replies.forEach((reply, i) => {
          const text = reply instanceof Error ? reply.message : "";
          assert.doesNotMatch(
            text,
            /^(EMQWIRE|WRONGTYPE|NOPERM|MOVED|CROSSSLOT)/,
            `${VERBS[i]!.verb} on ${primary.port}`,
          );
        });
        assert.equal(replies[0], 1, `EMQ.ENQUEUE on ${primary.port} enqueued`);
      }
    }
    await record.cli("DEL", V);
  });

  test(`the fence reads nothing: a user with no grant on ${V} passes on a cluster (refused NOPERM on one node)`, async () => {
    const user = ["ACL", "SETUSER", "u", "on", ">pw", "~emq:*", "+@all"];
    const primary = cluster.primaries()[0]!;
    const q = queueOn(cluster, primary, "acl");
    const enqueue = ["EMQ.ENQUEUE", 2, jobKey(q, J1), queueKey(q, "pending"), J1, "p"];
    await primary.cli(...user);
    assert.equal(await rawCommand(primary.port, enqueue, { user: "u", password: "pw" }), 1);
    const single = await startValkey({ module: modulePath() });
    try {
      await single.cli("EMQ.INSTALL", 1, V);
      await single.cli(...user);
      await assert.rejects(rawCommand(single.port, enqueue, { user: "u", password: "pw" }), {
        message: "NOPERM No permissions to access a key",
      });
    } finally {
      await single.stop();
    }
  });

  test("EMQ.INSTALL is routed by its declared key: MOVED elsewhere, installs on the record's owner", async () => {
    const record = cluster.ownerOf(slot(V));
    await record.cli("DEL", V);
    for (const other of cluster.primaries().filter((p) => p !== record)) {
      await assert.rejects(other.cli("EMQ.INSTALL", 1, V), {
        message: `MOVED ${slot(V)} 127.0.0.1:${record.port}`,
      });
    }
    assert.equal(await record.cli("EMQ.INSTALL", 1, V), 1);
    assert.equal(await record.cli("EMQ.INSTALL", 1, V), 0);
    assert.equal(await record.cli("GET", V), WIRE6);
  });

  test("a verb's wake reaches the slot's shard subscribers, on its primary and once on its replica; no other shard; not the AOF", async () => {
    const [owner, other] = cluster.primaries() as [ClusterNode, ClusterNode];
    const q = queueOn(cluster, owner, "wake");
    const channel = queueKey(q, "wake");
    const replica = cluster.replicas(owner)[0]!;
    const onOwner = await shardListener(owner.port, channel);
    const onReplica = await shardListener(replica.port, channel);
    const onOther = await plainListener(other.port, channel);
    try {
      assert.equal(await owner.cli("EMQ.ENQUEUE", 2, jobKey(q, J1), queueKey(q, "pending"), J1, "p"), 1);
      await wakeHeard(onOwner, onReplica);
      assert.deepEqual(onOwner.shard, ["1"]);
      assert.deepEqual(onReplica.shard, ["1"], "once: over the cluster bus, not replicated as well");
      assert.deepEqual(
        [...onOwner.plain, ...onReplica.plain, ...onOther],
        [],
        "plain subscribers hear nothing",
      );
      await assert.rejects(
        other.cli("SSUBSCRIBE", channel).then(() => {}),
        { message: `MOVED ${slot(channel)} 127.0.0.1:${owner.port}` },
        "another shard serves no subscription to the channel",
      );
      assert.match(aofText(owner), /ZADD/);
      assert.doesNotMatch(aofText(owner), /PUBLISH/i);
      assert.doesNotMatch(aofText(replica), /PUBLISH/i);
    } finally {
      onOwner.close();
      onReplica.close();
    }
  });
});

/** Plain-subscribes on `port` to `channel` (the messages are returned as they come). */
async function plainListener(port: number, channel: string): Promise<string[]> {
  const heard: string[] = [];
  const c = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 });
  c.on("error", () => {});
  await c.connect();
  c.on("message", (_c: string, m: string) => heard.push(m));
  await c.subscribe(channel);
  setTimeout(() => c.disconnect(), 3000).unref();
  return heard;
}

describe("the scripts on a cluster (3 plain primaries, a replica each)", () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 1, aof: true });
  });
  after(async () => {
    await cluster?.stop();
  });

  test("a script's wake (redis.pcall SPUBLISH in the queue's slot) reaches the slot's shard subscribers, once on the replica; not the AOF", async () => {
    const owner = cluster.primaries()[1]!;
    const q = queueOn(cluster, owner, "s");
    const channel = queueKey(q, "wake");
    const replica = cluster.replicas(owner)[0]!;
    const onOwner = await shardListener(owner.port, channel);
    const onReplica = await shardListener(replica.port, channel);
    try {
      const body = scriptFor("ENQUEUE").source;
      const reply = await owner.cli("EVAL", body, 2, jobKey(q, J1), queueKey(q, "pending"), J1, "p");
      assert.equal(reply, 1);
      await wakeHeard(onOwner, onReplica);
      assert.deepEqual([onOwner.shard, onReplica.shard], [["1"], ["1"]]);
      assert.deepEqual([...onOwner.plain, ...onReplica.plain], []);
      assert.doesNotMatch(aofText(owner), /PUBLISH/i);
    } finally {
      onOwner.close();
      onReplica.close();
    }
  });
});

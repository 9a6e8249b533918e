/**
 * Queues and workers on a Valkey Cluster, both wires (docs/cluster.md): three primaries with a
 * replica each; the lifecycle basics and a worker on queues spread over the shards, with no
 * `MOVED` in the steady state; durability with `WAIT`; the wake subscription following its slot
 * to another primary; a transition on a half-moved slot refused (`TRYAGAIN`, `ASK`) before it
 * runs, on the source and the target; a node added later fenced before it carries anything, and one of the
 * wrong role refused, naming it. One cluster per wire.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { SHARD_CHANNELS } from "../src/connector/shard-subscriber.js";
import {
  type Connection,
  connect,
  DurabilityError,
  Queue,
  VersionFenceError,
  type Wire,
  Worker,
} from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { jobKey, queueKey, scriptFor, slot, fail, claim, retry, complete, promote } from "../src/protocol.js";
import { modulePath } from "../tools/module-path.js";
import { type ClusterNode, type LocalCluster, startCluster } from "./support/cluster.js";
import { label, movedCount, queueOn, queuePerShard, resetStats } from "./support/cluster-helpers.js";
import { startProxy } from "./support/proxy.js";
import { type RespArg, rawCommands } from "./support/resp.js";
import type { ValkeyServer } from "./support/valkey.js";
import { until, within } from "./support/until.js";

/** Subscribers a node has on a shard channel. */
async function shardSubscribers(node: ValkeyServer, channel: string): Promise<number> {
  const reply = (await node.cli("PUBSUB", "SHARDNUMSUB", channel)) as [string, number];
  return Number(reply[1]);
}

for (const wire of [4, 6] as Wire[]) {
  describe(`cluster lifecycle [wire ${wire}]`, () => {
    let cluster: LocalCluster;
    let conn: Connection;
    /** One queue per shard. */
    let queues: string[];
    /** The shard each of `queues` lives on. */
    let shards: ValkeyServer[];

    before(async () => {
      cluster = await startCluster({
        primaries: 3,
        replicas: 1,
        ...(wire === 6 ? { module: modulePath() } : {}),
      });
      if (wire === 6) assert.equal(await installModuleBrand({ nodes: cluster.seeds }), 1);
      conn = await connect({ nodes: cluster.seeds, wire, name: `emq-life-${wire}` });
      queues = queuePerShard(cluster, "life-");
      shards = cluster.primaries();
      await resetStats(cluster.nodes);
    });
    after(async () => {
      await conn?.close();
      await cluster?.stop();
    });

    test("connect fenced a socket to every node, replicas too", () => {
      assert.deepEqual([...conn.fencedNodes.keys()].sort(), cluster.nodes.map(label).sort());
    });

    test("add, claim, complete, fail, retry, pause, resume and a delayed job, on every shard", async () => {
      for (const [i, name] of queues.entries()) {
        const q = new Queue(name, conn);
        const { id: a } = await q.add("a");
        const ja = await claim(conn, name, 30_000);
        assert.equal(ja?.id, a);
        await complete(conn, name, a, ja!.attempts, "done-a", 100);

        const { id: b } = await q.add("b", { maxAttempts: 2 });
        let jb = await claim(conn, name, 30_000);
        assert.equal(
          await fail(conn, name, b, jb!.attempts, "boom", { backoffMs: 0, maxAttempts: 2, keep: 10 }),
          "pending",
        );
        jb = await claim(conn, name, 30_000);
        assert.equal(
          await fail(conn, name, b, jb!.attempts, "boom", { backoffMs: 0, maxAttempts: 2, keep: 10 }),
          "dead",
        );
        await retry(conn, name, b);
        jb = await claim(conn, name, 30_000);
        assert.equal(jb?.id, b);
        await complete(conn, name, b, jb!.attempts, "done-b", 100);

        const { id: c } = await q.add("c");
        assert.equal(await q.pause(), true);
        assert.equal(await claim(conn, name, 30_000), null, "paused: nothing claimed");
        assert.equal(await q.resume(), true);
        const jc = await claim(conn, name, 30_000);
        assert.equal(jc?.id, c);
        await complete(conn, name, c, jc!.attempts, "done-c", 100);

        const { id: d } = await q.add("d", { delay: 20 });
        await sleep(30);
        // Wire 6: the shard's primary promotes by itself (its own timers), maybe first.
        const promoted = await promote(conn, name, 10);
        if (wire === 4) assert.equal(promoted, 1);
        const jd = await claim(conn, name, 30_000);
        assert.equal(jd?.id, d);
        await complete(conn, name, d, jd!.attempts, "done-d", 100);

        const counts = await q.counts();
        assert.deepEqual(counts, {
          pending: 0,
          scheduled: 0,
          active: 0,
          completed: 4,
          dead: 0,
          waiting: 0,
          paused: false,
        });
        assert.equal(Number(await shards[i]!.cli("ZCARD", queueKey(name, "done"))), 4, "on its own shard");
        assert.equal(String((await q.getJob(b))?.result), "done-b");
      }
    });

    test("a worker per queue drains queues spread over the shards (retries and delayed jobs too)", async () => {
      const done = new Set<string>();
      const failedOnce = new Set<string>();
      const workers = queues.map(
        (name) =>
          new Worker(
            new Queue(name, conn),
            async (job) => {
              if (job.payload.toString() === "flaky" && !failedOnce.has(job.id)) {
                failedOnce.add(job.id);
                throw new Error("once");
              }
              done.add(job.id);
            },
            {
              concurrency: 4,
              idleCheckMs: 20,
              promoteEveryMs: 100,
              attempts: 3,
              backoff: { type: "fixed", delayMs: 0 },
            },
          ),
      );
      await Promise.all(workers.map((w) => w.ready));
      let expected = 0;
      for (const name of queues) {
        const q = new Queue(name, conn);
        await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ payload: i % 5 === 0 ? "flaky" : `p${i}` })));
        await q.add("later", { delay: 50 });
        expected += 21;
      }
      await until(`${expected} jobs done`, async () => done.size === expected, 10_000);
      await Promise.all(workers.map((w) => w.close()));
      assert.equal(failedOnce.size, 12);
      for (const w of workers) assert.equal(w.transientErrors, 0);
    });

    test("steady state: no MOVED on any node", async (t) => {
      const moved = await movedCount(cluster.nodes);
      t.diagnostic(`wire ${wire}: errorstat_MOVED summed over ${cluster.nodes.length} nodes = ${moved}`);
      assert.equal(moved, 0);
    });

    test("durability: WAIT 1 returns once the shard's replica has the add", async () => {
      for (const name of queues) {
        const q = new Queue(name, conn, { durability: { replicas: 1, timeoutMs: 2000 } });
        const { id } = await q.add("safe");
        assert.ok(await q.getJob(id));
        assert.equal((await q.addBulk([{ payload: "x" }, { payload: "y" }])).length, 2);
      }
    });

    test("the wake subscription follows its slot to another primary and a wake arrives there", async (t) => {
      if (!SHARD_CHANNELS) return t.skip("SHARD_CHANNELS is off: classic channels do not live in a slot");
      const from = cluster.primaries()[0]!;
      const to = cluster.primaries()[1]!;
      const name = queueOn(from, "wake-");
      const channel = queueKey(name, "wake");
      const done: string[] = [];
      const worker = new Worker(new Queue(name, conn), async (job) => void done.push(job.id), {
        concurrency: 1,
        idleCheckMs: 60_000, // only a wake releases the idle slot
      });
      await worker.ready;
      try {
        await until("subscribed on the owner", async () => (await shardSubscribers(from, channel)) === 1);
        await cluster.moveSlot(slot(channel), to);
        await until(
          "subscribed again on the new owner",
          async () => (await shardSubscribers(to, channel)) === 1,
        );
        assert.equal(await shardSubscribers(from, channel), 0);
        await sleep(50); // the look every idle slot takes after resubscribing has come back empty
        const { id } = await new Queue(name, conn).add("after the move"); // its wake: SPUBLISH on the new owner
        await until("the job ran", async () => done.includes(id), 2000);
      } finally {
        await worker.close();
      }
    });

    test("a transition on a half-moved slot is answered TRYAGAIN (or ASK, then TRYAGAIN) before it runs; then the move ends and it runs", async () => {
      const [from, to] = cluster.primaries() as [ClusterNode, ClusterNode];
      const name = queueOn(from, "half-");
      const s = slot(queueKey(name, ""));
      await new Queue(name, conn).addBulk([{ payload: "a" }, { payload: "b" }]);
      const keys = [queueKey(name, "pending"), queueKey(name, "active"), queueKey(name, "")];
      const claimLine: RespArg[] =
        wire === 6
          ? ["EMQ.CLAIM", 3, ...keys, 30_000]
          : ["EVAL", scriptFor("CLAIM").source, 3, ...keys, 30_000];
      const add = (id: string): RespArg[] => {
        const tail = [2, jobKey(name, id), queueKey(name, "pending"), id, "p"];
        return wire === 6 ? ["EMQ.ENQUEUE", ...tail] : ["EVAL", scriptFor("ENQUEUE").source, ...tail];
      };
      const text = (r: unknown) => (r instanceof Error ? (r.message.split(" ")[0] ?? "") : JSON.stringify(r));
      await to.cli("CLUSTER", "SETSLOT", s, "IMPORTING", from.id);
      await from.cli("CLUSTER", "SETSLOT", s, "MIGRATING", to.id);
      try {
        const [claimed, added] = await rawCommands(from.port, [claimLine, add("JOB0000000000H")]);
        assert.deepEqual(
          [text(claimed), text(added)],
          ["TRYAGAIN", "TRYAGAIN"],
          "nothing moved yet: keys present, the base absent",
        );
        await from.cli(
          "MIGRATE",
          to.host,
          to.port,
          "",
          0,
          5000,
          "KEYS",
          ...((await from.cli("CLUSTER", "GETKEYSINSLOT", s, 100)) as string[]),
        );
        assert.match(text((await rawCommands(from.port, [claimLine]))[0]), /^ASK$/, "every key gone: ASK");
        const [, onTarget, , addOnTarget] = await rawCommands(to.port, [
          ["ASKING"],
          claimLine,
          ["ASKING"], // once per command
          add("JOB0000000000H"),
        ]);
        assert.deepEqual(
          [text(onTarget), text(addOnTarget)],
          ["TRYAGAIN", "TRYAGAIN"],
          "the target: a declared key absent",
        );
        const [, ready] = await rawCommands(to.port, [["ASKING"], ["ZCARD", queueKey(name, "pending")]]);
        assert.equal(ready, 2, "nothing claimed");
      } finally {
        await cluster.moveSlot(s, to); // ends the move
      }
      assert.ok(await claim(conn, name, 30_000), "claimed on the new owner");
    });

    test("durability on a shard whose replica is gone: DurabilityError, the job exists", async () => {
      const shard = cluster.ownerOf(slot(queueKey(queues[0]!, "")));
      const replica = cluster.replicas(shard)[0]!;
      await replica.stop();
      const q = new Queue(queues[0]!, conn);
      const err = await q.add("unsafe", { durability: { replicas: 1, timeoutMs: 100 } }).then(
        () => assert.fail("acknowledged"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof DurabilityError, String(err));
      assert.ok(await q.getJob(err.ids[0]!), "the job exists on the primary");
    });

    test("a node added later is fenced before it carries anything; one of the wrong role stops the connection, naming it", async () => {
      const [sameRole, wrongRole] = await within(
        "adding two nodes",
        Promise.all([
          cluster.addNode(wire === 6 ? { module: modulePath() } : {}),
          cluster.addNode(wire === 4 ? { module: modulePath() } : {}),
        ]),
      );
      const proxy = await startProxy({ targetPort: sameRole.port });
      const late = await within(
        "connecting through the proxy",
        connect({
          nodes: cluster.seeds,
          wire,
          name: "emq-late",
          natMap: { [label(sameRole)]: { host: proxy.host, port: proxy.port } },
        }),
      );
      try {
        const name = queues[1]!;
        const counts = await within("counts before the move", new Queue(name, late).counts());
        await within("moving a slot to the new node", cluster.moveSlot(slot(queueKey(name, "")), sameRole));
        const moved = await within("counts from the new node", new Queue(name, late).counts());
        assert.deepEqual(moved, counts, "read from the new node");
        const sockets = [...new Set(proxy.commands.map((c) => c.conn))];
        assert.ok(sockets.length >= 1, "the new node got a socket");
        for (const socket of sockets) {
          const [boot, fence, next] = proxy.commandsOf(socket);
          assert.deepEqual(boot, ["CLIENT", "SETNAME", "emq-late"]);
          assert.deepEqual(fence, ["EMQ.VERSION"]);
          assert.ok(next);
        }
        assert.ok((late.fencedNodes.get(`${proxy.host}:${proxy.port}`) ?? 0) >= 1);

        const other = queues[2]!;
        await within(
          "moving a slot to the wrong-role node",
          cluster.moveSlot(slot(queueKey(other, "")), wrongRole),
        );
        const err = await within("counts from the wrong-role node", new Queue(other, late).counts()).then(
          () => assert.fail("served"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof VersionFenceError, String(err));
        assert.equal(err.node, label(wrongRole));
        assert.equal(late.fatal, err);
        await assert.rejects(
          within("counts after the stop", new Queue(name, late).counts()),
          (e) => e === err,
        );
      } finally {
        await within("closing the late connection", late.close());
        await within("closing the proxy", proxy.close());
      }
    });
  });
}

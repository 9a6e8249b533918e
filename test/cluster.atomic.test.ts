/**
 * Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`) with the module loaded on every node
 * (docs/cluster.md, "Resharding"): the module declares it handles it, so the cluster accepts the
 * migration; a blocking claim on the slot's queue is ended with `MOVED` when the slot leaves; the
 * server timers of the new owner take over the queue's due jobs, the old owner's leave them; and
 * a busy queue's slot migrated while a worker runs loses nothing and runs nothing twice, on both
 * wires. Skipped unless the server under test is Valkey 9 (`ECHOMQ_VALKEY_SERVER`).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connect, Queue, Worker } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { queueKey, slot } from "../src/protocol.js";
import { valkeyMajor } from "../tools/embedded-valkey.js";
import { modulePath } from "../tools/module-path.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { queueOn, resetStats } from "./support/cluster-helpers.js";
import { claimKeys, refusalOf } from "./support/module.js";
import { connectResp } from "./support/resp.js";
import { timerStats } from "./support/timers.js";
import { until } from "./support/until.js";
import { WIRES } from "./support/wires.js";

const skip = valkeyMajor() < 9 && "needs Valkey 9: ECHOMQ_VALKEY_SERVER=.valkey9/valkey-server";

/** Moves the slot of queue `q` atomically from its owner to the next primary; both nodes. */
async function migrateQueue(cluster: LocalCluster, q: string) {
  const s = slot(queueKey(q, ""));
  const primaries = cluster.primaries();
  const k = primaries.findIndex((n) => n.slots.some(([lo, hi]) => lo <= s && s <= hi));
  const [from, to] = [primaries[k]!, primaries[(k + 1) % primaries.length]!];
  await cluster.migrateSlots(from, to, s, s);
  return { from, to, s };
}

describe("atomic slot migration with the module on every node", { skip }, () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await startCluster({ primaries: 3, module: modulePath() });
    await installModuleBrand({ nodes: cluster.seeds });
  });
  after(async () => {
    await cluster?.stop();
  });

  test("a blocking claim on a slot that leaves is ended with MOVED to the new owner", async () => {
    const q = queueOn(cluster.primaries()[0]!, "am-");
    const from = cluster.primaries()[0]!;
    const waiter = await connectResp(from.port);
    try {
      const wait = waiter.send(["EMQ.BCLAIM", 3, ...claimKeys(q), 30000, 60000]);
      await sleep(50);
      const { to, s } = await migrateQueue(cluster, q);
      assert.equal(refusalOf(await wait), `MOVED ${s} ${to.host}:${to.port}`);
    } finally {
      await waiter.close();
    }
  });

  test("due jobs of a migrated queue are promoted once, by the new owner's timers", async () => {
    const conn = await connect({ nodes: cluster.seeds, wire: 6 });
    try {
      const q = queueOn(cluster.primaries()[1]!, "at-");
      const queue = new Queue(q, conn);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await queue.add(`d${i}`, { delay: 1500 + 20 * i })).id);
      const { from, to } = await migrateQueue(cluster, q);
      const [fromBefore, toBefore] = [await timerStats(from), await timerStats(to)];
      await until(
        "the new owner's timers promoted every job",
        async () => (await queue.counts()).pending === 20,
        20_000,
      );
      await sleep(500); // a stray tick on the old owner would come now
      assert.equal((await timerStats(to)).promoted - toBefore.promoted, 20);
      assert.equal((await timerStats(from)).promoted - fromBefore.promoted, 0);
      assert.equal(Number(await from.cli("CLUSTER", "COUNTKEYSINSLOT", slot(queueKey(q, "")))), 0);
      const c = await queue.counts();
      assert.deepEqual([c.pending, c.scheduled, c.active], [20, 0, 0]);
    } finally {
      await conn.close();
    }
  });
});

for (const wire of WIRES) {
  describe(`a busy queue's slot migrated atomically under a running worker [wire ${wire}]`, { skip }, () => {
    let cluster: LocalCluster;
    before(async () => {
      cluster = await startCluster({ primaries: 3, ...(wire === 6 ? { module: modulePath() } : {}) });
      if (wire === 6) await installModuleBrand({ nodes: cluster.seeds });
    });
    after(async () => {
      await cluster?.stop();
    });

    test("0 lost, 0 run twice, 0 stuck; clients follow MOVED, never ASK or TRYAGAIN", async () => {
      const conn = await connect({ nodes: cluster.seeds, wire });
      try {
        const q = queueOn(cluster.primaries()[2]!, "ab-");
        const queue = new Queue(q, conn);
        const runs = new Map<string, number>();
        const worker = new Worker(queue, async (job) => void runs.set(job.id, (runs.get(job.id) ?? 0) + 1), {
          concurrency: 2,
        });
        await worker.ready;
        await resetStats(cluster.nodes);
        const acked: string[] = [];
        let adding = true;
        let failed: unknown;
        const producer = (async () => {
          while (adding) acked.push((await queue.add(`n${acked.length}`, { delay: acked.length % 3 })).id);
        })().catch((err: unknown) => {
          failed = err;
        });
        const adds = (n: number) => () => {
          if (failed !== undefined) throw failed;
          return acked.length >= n;
        };
        await until("the queue busy", adds(200), 20_000);
        await migrateQueue(cluster, q);
        await until("more adds after the move", adds(600), 20_000);
        adding = false;
        await producer;
        await until("every acknowledged job run", () => acked.every((id) => runs.has(id)), 30_000);
        await worker.close();
        const twice = [...runs].filter(([, n]) => n > 1);
        assert.deepEqual(twice, [], "run twice");
        assert.deepEqual(
          acked.filter((id) => !runs.has(id)),
          [],
          "lost",
        );
        const c = await queue.counts();
        assert.deepEqual([c.pending, c.active, c.scheduled], [0, 0, 0], "stuck");
        const stats = await Promise.all(
          cluster.nodes.map(async (n) => String(await n.cli("INFO", "errorstats"))),
        );
        assert.ok(!stats.some((s) => /errorstat_(ASK|TRYAGAIN):/.test(s)), stats.join("\n"));
        assert.ok(
          stats.some((s) => /errorstat_MOVED:/.test(s)),
          "some client followed MOVED",
        );
      } finally {
        await conn.close();
      }
    });
  });
}

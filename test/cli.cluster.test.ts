/**
 * The built `echomq` binary against a local 3-primary cluster (`--nodes`), both wires: queues
 * found on every shard (a laned queue grouped under its name), status per primary, jobs and the
 * bulk actions routed to each queue's shard, `events --follow` on the queue's shard, `install`
 * following `MOVED` to the record's owner.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Connection, connect, type Job, Queue, type Wire, Worker } from "../src/index.js";
import { queueKey, slot } from "../src/protocol.js";
import { modulePath } from "../tools/module-path.js";
import { assertBuilt, echomq, echomqJson, follow } from "./support/cli.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { until } from "./support/until.js";
import { WIRE6 } from "./support/module.js";

interface QueueRow {
  name: string;
  lanes: number;
  pending: number;
  scheduled: number;
  workers?: number;
}

for (const wire of [4, 6] as Wire[]) {
  describe(`echomq on a cluster [wire ${wire}]`, () => {
    let cluster: LocalCluster;
    let conn: Connection;
    let nodes: string;
    const json = <T>(args: string[]) => echomqJson<T>([...args, "--nodes", nodes]);

    before(async () => {
      assertBuilt();
      cluster = await startCluster({ primaries: 3, ...(wire === 6 ? { module: modulePath() } : {}) });
      nodes = cluster.seeds.map((s) => `${s.host}:${s.port}`).join(",");
      if (wire === 6) {
        assert.deepEqual(await json(["install"]), { installed: true, brand: WIRE6 });
      }
      conn = await connect({ nodes: cluster.seeds, wire });
    });
    after(async () => {
      await conn?.close();
      await cluster?.stop();
    });

    test("queues on every shard, a laned queue grouped; status lists the primaries", async () => {
      const names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
      const owners = new Set(names.map((n) => cluster.ownerOf(slot(queueKey(n, ""))).port));
      assert.equal(owners.size, 3, "the queues live on all three shards");
      for (const name of names) await json(["enqueue", name, `${name}-1`]);
      await new Queue("wide", conn, { lanes: 6 }).addBulk(
        Array.from({ length: 12 }, (_, i) => ({ payload: `w${i}` })),
      );
      const { queues, scanComplete } = await json<{ queues: QueueRow[]; scanComplete: boolean }>(["queues"]);
      assert.equal(scanComplete, true);
      assert.deepEqual(
        queues.map((q) => q.name),
        [...names, "wide"],
      );
      assert.deepEqual(
        queues.map((q) => q.pending),
        [1, 1, 1, 1, 1, 1, 12],
      );
      assert.equal(queues.at(-1)!.lanes, 6);
      const status = await json<{ mode: string; servers: unknown[]; wire: number; module: string | null }>([
        "status",
      ]);
      assert.equal(status.mode, "cluster");
      assert.equal(status.servers.length, 3);
      assert.equal(status.wire, wire);
      assert.equal(status.module, wire === 6 ? "0.5.0" : null);
    });

    test("jobs, promote, drain and obliterate on each queue's shard and every lane", async () => {
      const { id } = await json<{ id: string }>(["enqueue", "golf", "later", "--delay", "60000"]);
      assert.deepEqual(
        (await json<{ jobs: { id: string }[] }>(["jobs", "golf", "--state", "scheduled"])).jobs.map(
          (j) => j.id,
        ),
        [id],
      );
      await json(["promote", "golf", id]);
      assert.equal((await json<{ state: string }>(["job", "golf", id])).state, "pending");
      const wide = await json<{ jobs: unknown[] }>(["jobs", "wide", "--limit", "5"]);
      assert.equal(wide.jobs.length, 5);
      assert.deepEqual(await json(["drain", "wide", "--yes"]), { queue: "wide", deleted: 12 });
      assert.deepEqual(await json(["obliterate", "wide", "--yes"]), { queue: "wide", deleted: 0 });
      assert.deepEqual(await json(["obliterate", "golf", "--yes"]), { queue: "golf", deleted: 1 });
      const { queues } = await json<{ queues: QueueRow[] }>(["queues"]);
      assert.equal(
        queues.some((q) => q.name === "wide" || q.name === "golf"),
        false,
      );
      const live = follow(["events", "hotel", "--follow", "--json", "--nodes", nodes]);
      try {
        await live.until(() => /following/.test(live.stderr()), "the reader started");
        await json(["enqueue", "hotel", "h1"]);
        await live.until(() => live.lines.length >= 1, "an event");
        assert.equal(JSON.parse(live.lines[0]!).kind, "added");
      } finally {
        assert.equal(await live.stop(), 0);
      }
      const bad = await echomq(["queues", "--nodes", "127.0.0.1:1"]);
      assert.equal(bad.code, 3);
    });

    test("pause, resume, retry, remove, clean, metrics and dashboard on the queue's shard", async () => {
      const q = new Queue("india", conn);
      const [a, b] = await q.addBulk([{ payload: "fails" }, { payload: "stays" }]);
      const worker = new Worker(
        q,
        (job: Job) => {
          if (job.text() === "fails") throw new Error("no");
        },
        { attempts: 1, idleCheckMs: 50 },
      );
      await until(
        "both jobs to settle",
        async () => (await q.counts()).dead + (await q.counts()).completed >= 2,
        20_000,
      );
      await worker.close();
      assert.equal((await json<{ state: string }>(["job", "india", a!.id])).state, "dead");
      await json(["pause", "india"]);
      assert.equal((await q.counts()).paused, true);
      await json(["retry", "india", a!.id]);
      assert.equal((await q.getJob(a!.id))?.state, "pending", "retried, waiting while paused");
      await json(["resume", "india"]);
      assert.equal((await q.counts()).paused, false);
      await json(["remove", "india", a!.id]);
      assert.equal(await q.getJob(a!.id), null);
      assert.deepEqual(await json(["clean", "india", "--state", "completed"]), {
        queue: "india",
        state: "completed",
        deleted: 1,
      });
      assert.equal(await q.getJob(b!.id), null);
      await json(["enqueue", "india", "waiting"]);
      const text = await echomq(["metrics", "--nodes", nodes]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /^echomq_jobs\{queue="india",state="pending"\} 1$/m);
      const served = follow(["dashboard", "--port", "0", "--json", "--nodes", nodes]);
      try {
        await served.until(() => served.lines.length >= 1, "the dashboard's URL");
        const { url } = JSON.parse(served.lines[0]!) as { url: string };
        const res = await fetch(new URL("/api/queues", url));
        const body = (await res.json()) as { queues: { name: string; counts: { pending: number } }[] };
        assert.equal(body.queues.find((x) => x.name === "india")?.counts.pending, 1);
      } finally {
        assert.equal(await served.stop(), 0);
      }
    });
  });
}

/**
 * The dashboard's API on a local 3-primary cluster, both wires: every shard's queues found and
 * counted (a laned queue summed under its name), the throughput counted from each queue's bus on
 * its own shard, a job's detail and timeline read from its shard, and an action (retry of a dead
 * job) routed there, another site's action refused; the console's reads (by key, by payload,
 * schedules, flow control, the hour) and a bulk action on every shard — with no read redirected.
 */
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { startDashboard } from "../src/dashboard/server.js";
import { type Connection, type Job, Queue, type Wire, Worker } from "../src/index.js";
import type { LocalCluster } from "./support/cluster.js";
import { until } from "./support/until.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { movedCount, queuePerShard, resetStats } from "./support/cluster-helpers.js";

const json = async (url: URL, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as any };
};

forEachClusterWire("dashboard on a cluster", (ctx) => {
  let cluster: LocalCluster;
  let conn: Connection;
  let wire: Wire;
  beforeEach(() => {
    ({ cluster, conn, wire } = ctx());
  });

  test("a queue per shard and a laned queue: counts, throughput, a job, a retry", async () => {
    const names = queuePerShard(cluster, `dash${wire}-`);
    const wide = new Queue(`wide${wire}`, conn, { lanes: 6 });
    await wide.addBulk(Array.from({ length: 12 }, (_, i) => ({ payload: `w${i}` })));
    const queues = names.map((n) => new Queue(n, conn));
    for (const [i, q] of queues.entries()) {
      await q.addBulk(Array.from({ length: 10 + i }, (_, k) => ({ payload: k === 0 ? "fail" : "ok" })));
    }
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    const api = (path: string) => new URL(path, dash.url);
    try {
      await resetStats(cluster.primaries());
      // One sample first (the queues found, each bus's position taken): throughput counts what
      // completes after it.
      await json(api("/api/queues"));
      let healed = false;
      const workers = queues.map(
        (q) =>
          new Worker(
            q,
            (job: Job) => {
              if (job.text() === "fail" && !healed) throw new Error("refused");
            },
            { attempts: 1, idleCheckMs: 50 },
          ),
      );
      await until(
        "every job settled",
        async () => {
          const c = await Promise.all(queues.map((q) => q.counts()));
          return c.every((x, i) => x.completed + x.dead === 10 + i);
        },
        30_000,
      );
      let snapshot: any;
      await until(
        "every completion counted from the buses",
        async () => {
          snapshot = (await json(api("/api/queues"))).body;
          return names.every(
            (n, i) => snapshot.queues.find((q: any) => q.name === n)?.counted.completed === 9 + i,
          );
        },
        30_000,
      );
      assert.deepEqual(
        snapshot.queues.map((q: any) => q.name),
        [...names, `wide${wire}`].sort(),
      );
      for (const [i, n] of names.entries()) {
        const q = snapshot.queues.find((x: any) => x.name === n);
        assert.deepEqual([q.counts.completed, q.counts.dead, q.counted.failed], [9 + i, 1, 1], n);
      }
      const laned = snapshot.queues.find((x: any) => x.name === `wide${wire}`);
      assert.equal(laned.counts.pending, 12);
      // its six lanes, and the queue's own meta (where the lane count is recorded)
      assert.equal(laned.physical.filter((p: string) => p !== `wide${wire}`).length, 6);

      const [name] = names;
      const page = await json(api(`/api/queues/${name}/jobs?state=dead`));
      assert.equal(page.body.total, 1);
      const id = page.body.jobs[0].id as string;
      const detail = await json(api(`/api/queues/${name}/jobs/${id}`));
      assert.deepEqual(
        detail.body.job.timeline.map((e: any) => e.kind),
        ["added", "active", "failed", "dead"],
      );
      healed = true;
      const action = (origin: string) => ({
        method: "POST",
        headers: { origin, "content-type": "application/json" },
        body: "{}",
      });
      // Another site's page cannot act on the shard's queue: refused, nothing done.
      await queues[0]!.add("later", { delay: 3_600_000 });
      const refused = await json(api(`/api/queues/${name}/drain`), action("http://evil.example"));
      assert.equal(refused.status, 403);
      assert.match(refused.body.error, /^refused: an action from "http:\/\/evil\.example" \(Origin\)/);
      assert.equal((await queues[0]!.counts()).scheduled, 1, "not drained");
      const retried = await json(api(`/api/queues/${name}/jobs/${id}/retry`), action(api("/").origin));
      assert.deepEqual(retried.body, { ok: true });
      await until(
        "the retried job completed",
        async () => (await queues[0]!.getJob(id))?.state === "completed",
        30_000,
      );
      await Promise.all(workers.map((w) => w.close()));
      assert.equal(await movedCount(cluster.primaries()), 0, "no command was redirected");
    } finally {
      await dash.close();
    }
  });

  test("the console's reads and bulk actions on every shard: key, search, schedules, flow control, bulk", async () => {
    const names = queuePerShard(cluster, `con${wire}-`);
    const queues = names.map((n) => new Queue(n, conn));
    for (const q of queues) {
      await q.add("keyed", { key: "the-key" });
      await q.addBulk(
        Array.from({ length: 3 }, (_, i) => ({ payload: `later ${i}`, opts: { delay: 3_600_000 } })),
      );
      await q.schedule("tick", { everyMs: 60_000, payload: "t" });
    }
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    const api = (path: string) => new URL(path, dash.url);
    const post = (path: string, body: unknown) =>
      json(api(path), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    try {
      await json(api("/api/queues"));
      await resetStats(cluster.primaries());
      for (const [i, n] of names.entries()) {
        const q = queues[i]!;
        const [keyed] = await q.getJobs("pending");
        assert.deepEqual((await json(api(`/api/queues/${n}/find?key=the-key`))).body, { id: keyed!.id }, n);
        const found = await json(api(`/api/queues/${n}/search?state=scheduled&text=later%201`));
        assert.equal(found.body.jobs.length, 1, n);
        const schedules = await json(api(`/api/queues/${n}/schedules`));
        assert.deepEqual(
          schedules.body.schedules.map((x: any) => [x.name, x.next[0]]),
          (await q.schedules()).map((x) => [x.name, x.next]),
        );
        assert.deepEqual((await json(api(`/api/queues/${n}/flow-control`))).body.groups, []);
        const bulk = await post(`/api/queues/${n}/bulk`, { action: "promote", state: "scheduled", max: 3 });
        assert.deepEqual(bulk.body, { done: 3, refused: [], left: 0 }, n);
        assert.equal((await q.counts()).pending, 4, n);
        const series = await json(api(`/api/queues/${n}/series`));
        assert.equal(series.body.sampled, true, n);
      }
      assert.equal(await movedCount(cluster.primaries()), 0, "no command was redirected");
    } finally {
      await dash.close();
    }
  });
});

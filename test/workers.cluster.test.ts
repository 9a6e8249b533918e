/**
 * Workers visible on a local 3-primary cluster, both wires: each worker's announcement lives on
 * the primary that owns its queue's slot, `listWorkers` (and `echomq workers --nodes`) reads every
 * primary, and a worker leaves when it closes and when its process is killed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Job, Queue, Worker } from "../src/index.js";
import { listWorkers } from "../src/observe/workers.js";
import { queueKey, slot } from "../src/protocol.js";
import { startChildWorker } from "./support/announcing-worker.js";
import { assertBuilt, echomqJson } from "./support/cli.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { until } from "./support/until.js";

forEachClusterWire("workers visible on a cluster", (ctx) => {
  test("workers on two shards: announced on each queue's primary, gone when closed or killed", async () => {
    const { cluster, conn, wire } = ctx();
    const [here, there] = ["alpha", "bravo"];
    const owner = (q: string) => cluster.ownerOf(slot(queueKey(q, "")));
    assert.notEqual(owner(here).port, owner(there).port, "the two queues live on two shards");

    const open: (() => void)[] = [];
    const worker = new Worker(
      new Queue(here, conn),
      (_job: Job) => new Promise<void>((resolve) => open.push(resolve)),
      { concurrency: 2 },
    );
    const child = await startChildWorker({ nodes: cluster.seeds, wire }, there, 3);
    await new Queue(here, conn).add("h");
    for (const p of ["t1", "t2"]) await new Queue(there, conn).add(p);
    await until("one job held here, two there", async () => {
      const [a, b] = await Promise.all([new Queue(here, conn).counts(), new Queue(there, conn).counts()]);
      return a.active === 1 && b.active === 2;
    });
    const expected = [
      [here, 2, 1, process.pid, `${owner(here).host}:${owner(here).port}`],
      [there, 3, 2, child.pid, `${owner(there).host}:${owner(there).port}`],
    ];
    let seen = "";
    await until(
      () => `the announcements, got ${seen}`,
      async () => {
        const rows = (await listWorkers(conn)).map((w) => [w.queue, w.concurrency, w.busy, w.pid, w.node]);
        seen = JSON.stringify(rows);
        return seen === JSON.stringify(expected);
      },
      10_000,
    );

    assertBuilt();
    const nodes = cluster.seeds.map((s) => `${s.host}:${s.port}`).join(",");
    const cli = await echomqJson<{ workers: { queue: string; busy: number }[] }>([
      "workers",
      "--nodes",
      nodes,
    ]);
    assert.deepEqual(
      cli.workers.map((w) => [w.queue, w.busy]),
      [
        [here, 1],
        [there, 2],
      ],
    );

    await child.kill();
    await until("the killed worker to leave", async () => (await listWorkers(conn, there)).length === 0);
    for (const r of open.splice(0)) r();
    await worker.close();
    await until("the closed worker to leave", async () => (await listWorkers(conn)).length === 0);
  });
});

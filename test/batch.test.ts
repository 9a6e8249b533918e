/**
 * Claims in batches and batch processing, both wires and a cluster: a burst into an idle worker
 * with k free slots is leased in one call (`CLAIMN`), not k; a batch handler (`batch: { size,
 * maxWaitMs }`) gets batches of at most `size`, waits at most `maxWaitMs` for a partial one, and a
 * batch that partly fails retries only its failed jobs; a worker killed with a batch leased gives
 * every job back by lease expiry.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { type Connection, failed, type Job, Queue, Worker } from "../src/index.js";
import { scriptFor } from "../src/scripts/index.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { type MonitorHandle, monitor } from "./support/monitor.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} } };
const FIXTURE = join(import.meta.dirname, "fixtures", "batch-process.ts");

/** How many claims a client (not a script) sent: `EMQ.CLAIM`/`EMQ.CLAIMN`, or their `EVALSHA`s. */
function claims(mons: MonitorHandle[]): number {
  const shas = ["CLAIM", "CLAIMN"].map((v) => scriptFor(v).sha1);
  return mons
    .flatMap((m) => m.entries())
    .filter((e) => e.client !== "lua")
    .filter((e) => {
      const name = e.args[0]?.toUpperCase();
      return (
        name === "EMQ.CLAIM" || name === "EMQ.CLAIMN" || (name === "EVALSHA" && shas.includes(e.args[1]!))
      );
    }).length;
}

/**
 * `k` jobs added at once into an idle worker of concurrency `k` whose handlers hold until all `k`
 * run; resolves with the claims sent meanwhile.
 */
async function burst(conn: Connection, name: string, k: number, mons: () => Promise<MonitorHandle[]>) {
  const q = new Queue(name, conn);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  // No safety tick in the window (it would release a slot to claim on its own): only the wake.
  const worker = new Worker(q, () => held, { ...quiet, concurrency: k, idleCheckMs: 600_000 });
  await worker.ready;
  // Every slot idle: waiting for a wake, or the one waiting inside the server (wire 6's blocking
  // claim). A slot whose first claim is still on its way would send a claim of its own.
  const parts = worker as unknown as { gate: { waiting: number }; blocking: { held: boolean } };
  await until("every slot idle", () => parts.gate.waiting + (parts.blocking.held ? 1 : 0) === k);
  const watching = await mons();
  let sent: number;
  try {
    await q.addBulk(Array.from({ length: k }, (_, i) => ({ payload: `p${i}` })));
    await until(`${k} jobs running`, () => worker.activeCount === k, 20_000);
  } finally {
    await Promise.all(watching.map((m) => m.stop()));
    sent = claims(watching);
    release();
    await worker.close();
  }
  return sent;
}

/** Runs `n` jobs through a batch worker; resolves with each batch's payloads and each job's runs. */
async function batches(
  conn: Connection,
  name: string,
  n: number,
  options: { size: number; maxWaitMs?: number },
  failFirst: (payload: string) => boolean = () => false,
) {
  const q = new Queue(name, conn);
  await q.addBulk(Array.from({ length: n }, (_, i) => ({ payload: `p${i}` })));
  const seen: string[][] = [];
  const runs = new Map<string, number>();
  const worker = new Worker(
    q,
    (jobs: Job[]) => {
      seen.push(jobs.map((j) => j.text()));
      return jobs.map((job) => {
        runs.set(job.text(), (runs.get(job.text()) ?? 0) + 1);
        return failFirst(job.text()) && job.attempts === 1
          ? failed(new Error(`${job.text()} failed`))
          : job.text();
      });
    },
    { ...quiet, batch: options, backoff: { type: "fixed", delayMs: 0 } },
  );
  let completed = 0;
  worker.on("completed", () => completed++);
  await until(`${n} completions`, () => completed === n, 30_000);
  await worker.close();
  return { seen, runs, q };
}

forEachWire("claims in batches, batch processing", (ctx) => {
  test("a burst into an idle worker of concurrency 8 is leased in one call, not 8", async () => {
    const { conn, server } = ctx();
    const sent = await burst(conn, "bt-burst", 8, async () => [await monitor(server.port)]);
    assert.ok(sent >= 1 && sent <= 2, `claims sent for a burst of 8: ${sent}`);
  });

  test("at start-up a backlog fills every slot in one call", async () => {
    const { conn, server } = ctx();
    const q = new Queue("bt-start", conn);
    await q.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: `s${i}` })));
    const mon = await monitor(server.port);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const worker = new Worker(q, () => held, { ...quiet, concurrency: 6 });
    try {
      await until("6 jobs running", () => worker.activeCount === 6, 20_000);
    } finally {
      await mon.stop();
      release();
      await worker.close();
    }
    assert.equal(claims([mon]), 1);
  });

  test("batches of at most size; a partial failure retries only the failed jobs", async () => {
    const { conn } = ctx();
    const { seen, runs, q } = await batches(
      conn,
      "bt-partial",
      10,
      { size: 4 },
      (p) => p === "p3" || p === "p8",
    );
    assert.ok(
      seen.every((b) => b.length >= 1 && b.length <= 4),
      `batch sizes ${seen.map((b) => b.length)}`,
    );
    assert.deepEqual(seen[0], ["p0", "p1", "p2", "p3"], "the first batch: the oldest four, in order");
    for (let i = 0; i < 10; i++) assert.equal(runs.get(`p${i}`), i === 3 || i === 8 ? 2 : 1, `runs of p${i}`);
    const counts = await q.counts();
    assert.deepEqual([counts.completed, counts.pending, counts.active, counts.dead], [10, 0, 0, 0]);
    const ids = await q.getJobs("completed", { limit: 10 });
    const three = ids.find((j) => j.payload.toString() === "p3");
    assert.equal(three?.attempts, 2);
    assert.equal(three?.result?.toString(), "p3");
  });

  test("a partial batch waits for more up to maxWaitMs, then runs with what it has", async () => {
    const { conn } = ctx();
    const q = new Queue("bt-wait", conn);
    const seen: number[] = [];
    const worker = new Worker(q, (jobs: Job[]) => void seen.push(jobs.length), {
      ...quiet,
      batch: { size: 10, maxWaitMs: 3000 },
    });
    await worker.ready;
    let completed = 0;
    worker.on("completed", () => completed++);
    await q.add("a");
    await until("the first job leased", async () => (await q.counts()).active === 1);
    await q.addBulk([{ payload: "b" }, { payload: "c" }]);
    await until("three completions", () => completed === 3, 20_000);
    await worker.close();
    assert.deepEqual(seen, [3], "one batch: the job it had, and the two that came while it waited");
  });

  test("a worker killed with a batch leased gives every job back by lease expiry", async () => {
    const { conn, server, wire } = ctx();
    const name = "bt-kill";
    const q = new Queue(name, conn);
    await q.addBulk(Array.from({ length: 4 }, (_, i) => ({ payload: `k${i}` })));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", FIXTURE, String(server.port), String(wire), name, "4"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    let out = "";
    child.stdout.on("data", (d) => (out += String(d)));
    try {
      await until("the child's batch", () => /batch 4/.test(out), 30_000);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    assert.equal((await q.counts()).active, 4, "the killed worker held the batch");
    const done = new Map<string, number>();
    const worker = new Worker(q, (job) => void done.set(job.text(), job.attempts), {
      ...quiet,
      reapEveryMs: 100,
    });
    await until("every job of the batch run again", () => done.size === 4, 20_000);
    await worker.close();
    assert.deepEqual(
      [...done].sort(),
      ["k0", "k1", "k2", "k3"].map((p) => [p, 2]),
    );
  });
});

forEachClusterWire("claims in batches, batch processing on a cluster", (ctx) => {
  test("a burst is leased in one call on the queue's shard; batches settle each job", async () => {
    const { conn, cluster } = ctx();
    const sent = await burst(conn, "bt-c-burst", 6, () =>
      Promise.all(cluster.primaries().map((p) => monitor(p.port))),
    );
    assert.ok(sent >= 1 && sent <= 2, `claims sent for a burst of 6: ${sent}`);
    const { seen, runs } = await batches(conn, "bt-c-batch", 6, { size: 3 }, (p) => p === "p1");
    assert.ok(seen.every((b) => b.length <= 3));
    assert.equal(runs.get("p1"), 2);
    assert.equal(runs.get("p0"), 1);
  });
});

/**
 * One round trip per failed attempt per slot (`FAILNEXT`, docs/protocol.md), both wires and a
 * cluster: a busy slot's failure leases its next job in the same call — no pause read, no claim of
 * its own — and leases what a claim after the failure would: the retried job itself when it is
 * back at the head of `pending`, the job ahead of it by priority otherwise, nothing on a paused
 * queue. Retries with a backoff still land in `scheduled`; a reply cut between the failure and the
 * next lease, or a worker killed mid-run, loses no job (the leased ones come back when their lease
 * expires).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Connection, Queue, Worker, type WorkerOptions } from "../src/index.js";
import { claim, fail, failNext } from "../src/protocol.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { spawnChildWorker } from "./support/reliability.js";
import { assertOneCallPerJob, completesAfterLease, sendAndCut, watched } from "./support/fused.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} } };
const FAILING_WORKER = fileURLToPath(new URL("./fixtures/failing-worker-process.ts", import.meta.url));
const keysOf = (q: string) => ["active", "pending", "schedule", "dead", ""].map((t) => `emq:{${q}}:${t}`);
/** A retry at once, five attempts, dead jobs kept. */
const RETRY_NOW = { backoffMs: 0, maxAttempts: 5, keep: 100 };

/**
 * Runs `n` jobs whose handler always throws through one worker of concurrency 1 (dead at once,
 * unless `opts` give it more attempts); resolves with each failure's id and the state it left the
 * job in (`dead`, `pending`, `scheduled`), in order, once there are `n`.
 */
async function failAll(conn: Connection, name: string, n: number, opts: WorkerOptions = { attempts: 1 }) {
  const q = new Queue(name, conn);
  await q.addBulk(Array.from({ length: n }, (_, i) => ({ payload: `p${i}` })));
  const failures: string[] = [];
  const fails = () => {
    throw new Error("no");
  };
  const worker = new Worker(q, fails, { ...quiet, concurrency: 1, ...opts });
  worker.on("dead", (job) => failures.push(`${job.id} dead`));
  worker.on("retrying", (job, _err, state) => failures.push(`${job.id} ${state}`));
  await until(`${n} failures`, () => failures.length === n, 30_000);
  await worker.close();
  return failures;
}

forEachWire("FAILNEXT", (ctx) => {
  test("a failing handler's slot fails and receives its next job in one call", async () => {
    const { conn, server } = ctx();
    const n = 30;
    const [failures, mons] = await watched([server.port], () => failAll(conn, "fn-busy", n));
    assert.equal(new Set(failures).size, n, "every job once");
    assert.ok(
      failures.every((f) => f.endsWith(" dead")),
      failures.join(", "),
    );
    // Each failure leased the next job: the first job the only one claimed on its own (its pause
    // read with it on wire 4); none after a failure.
    assertOneCallPerJob(mons, "FAILNEXT", "FAIL", n);
    assert.equal((await new Queue("fn-busy", conn).counts()).dead, n);
  });

  test("a retried job back at the head of pending is leased again, as a claim after the failure leases it", async () => {
    const { conn } = ctx();
    const results = [];
    for (const [name, fused] of [
      ["fn-head-fused", true],
      ["fn-head-apart", false],
    ] as const) {
      const q = new Queue(name, conn);
      const [one, two] = await q.addBulk([{ payload: "a" }, { payload: "b" }]);
      const job = await claim(conn, name, 30_000);
      assert.equal(job?.id, one!.id);
      const next = fused
        ? await failNext(conn, name, one!.id, job!.attempts, "boom", RETRY_NOW, 30_000)
        : {
            state: await fail(conn, name, one!.id, job!.attempts, "boom", RETRY_NOW),
            next: await claim(conn, name, 30_000),
          };
      assert.equal((await q.getJob(two!.id))?.state, "pending");
      const row = await q.getJob(one!.id);
      results.push({
        state: next.state,
        id: next.next && "id" in next.next ? next.next.id === one!.id : null,
        attempts: next.next && "id" in next.next ? next.next.attempts : null,
        row: [row?.state, row?.attempts, row?.error],
      });
    }
    assert.deepEqual(results[0], { state: "pending", id: true, attempts: 2, row: ["active", 2, "boom"] });
    assert.deepEqual(results[1], results[0]);
  });

  test("a job ahead of the retried one by priority is the one leased", async () => {
    const { conn } = ctx();
    const name = "fn-priority";
    const q = new Queue(name, conn);
    const first = await q.add("a", { priority: 5 });
    const job = await claim(conn, name, 30_000);
    assert.equal(job?.id, first.id);
    const other = await q.add("b");
    const out = await failNext(conn, name, first.id, job!.attempts, "boom", RETRY_NOW, 30_000);
    assert.equal(out.state, "pending");
    assert.equal(out.next && "id" in out.next ? out.next.id : out.next, other.id);
    assert.equal((await q.getJob(first.id))?.state, "pending");
  });

  test("a paused queue: the failure happens, nothing is leased", async () => {
    const { conn } = ctx();
    const name = "fn-paused";
    const q = new Queue(name, conn);
    const [one] = await q.addBulk([{ payload: "a" }, { payload: "b" }]);
    const job = await claim(conn, name, 30_000);
    await q.pause();
    const out = await failNext(conn, name, one!.id, job!.attempts, "boom", RETRY_NOW, 30_000);
    assert.deepEqual(out, { state: "pending", next: null });
    const counts = await q.counts();
    assert.deepEqual([counts.pending, counts.active], [2, 0]);
  });

  test("max attempts 0: dead now over the row's own limit, the next job leased", async () => {
    const { conn } = ctx();
    const name = "fn-unrecoverable";
    const q = new Queue(name, conn);
    const first = await q.add("a", { maxAttempts: 9 });
    const other = await q.add("b");
    const job = await claim(conn, name, 30_000);
    assert.equal(job?.id, first.id);
    const now = { backoffMs: 60_000, maxAttempts: 0, keep: 100 };
    const out = await failNext(conn, name, first.id, job!.attempts, "declined", now, 30_000);
    assert.equal(out.state, "dead");
    assert.equal(out.next && "id" in out.next ? out.next.id : out.next, other.id);
    const row = await q.getJob(first.id);
    assert.deepEqual([row?.state, row?.attempts, row?.error], ["dead", 1, "declined"]);
  });

  test("retries with a backoff land in scheduled; the slot leases the next job", async () => {
    const { conn, server } = ctx();
    const n = 8;
    const later = { attempts: 3, backoff: { type: "fixed" as const, delayMs: 600_000 } };
    const [failures, mons] = await watched([server.port], () => failAll(conn, "fn-backoff", n, later));
    assert.ok(
      failures.every((f) => f.endsWith(" scheduled")),
      failures.join(", "),
    );
    const counts = await new Queue("fn-backoff", conn).counts();
    assert.deepEqual([counts.scheduled, counts.pending, counts.active], [n, 0, 0]);
    assertOneCallPerJob(mons, "FAILNEXT", "FAIL", n);
  });

  test("a reply cut between the failure and the next lease loses neither job", async () => {
    const { conn, server, wire } = ctx();
    const name = "fn-cut";
    const q = new Queue(name, conn);
    const [one, two] = await q.addBulk([{ payload: "a" }, { payload: "b" }]);
    const job = await claim(conn, name, 30_000);
    assert.equal(job?.id, one!.id);
    // The call reaches the server, its reply is lost. The failed job dies (max attempts 1), so
    // the next lease is the other one's.
    const values = [one!.id, String(job!.attempts), "boom", "0", "1", "10", "300", ""];
    await sendAndCut(server.port, wire, "FAILNEXT", keysOf(name), values);
    await until("the failure", async () => (await q.getJob(one!.id))?.state === "dead");
    const state = (await q.getJob(two!.id))?.state;
    assert.ok(state === "active" || state === "pending", `the next job is ${state}`);
    await completesAfterLease(q, two!.id);
    const counts = await q.counts();
    assert.deepEqual([counts.completed, counts.dead, counts.pending, counts.active], [1, 1, 0, 0]);
  });

  test("a worker killed mid-run loses no job: each one it held comes back when its lease expires", async () => {
    const { conn, server, wire } = ctx();
    const name = "fn-kill";
    const q = new Queue(name, conn);
    const n = 40;
    await q.addBulk(Array.from({ length: n }, (_, i) => ({ payload: `p${i}` })));
    const child = spawnChildWorker(server.port, wire, name, FAILING_WORKER);
    let failures = 0;
    child.child.stdout!.on("data", (d) => {
      failures += String(d)
        .split("\n")
        .filter((l) => l.startsWith("failed ")).length;
    });
    try {
      await child.ready;
      await until("ten failures in the child", () => failures >= 10, 30_000);
    } finally {
      child.child.kill("SIGKILL");
      await child.exited;
    }
    const worker = new Worker(q, () => "ok", { ...quiet, concurrency: 4, reapEveryMs: 100, attempts: 5 });
    await until("every job completed", async () => (await q.counts()).completed === n, 30_000);
    await worker.close();
    const counts = await q.counts();
    assert.deepEqual(
      [counts.completed, counts.pending, counts.scheduled, counts.active, counts.dead],
      [n, 0, 0, 0, 0],
    );
  });
});

forEachClusterWire("FAILNEXT on a cluster", (ctx) => {
  test("a failing handler's slot leases its next jobs on the queue's shard", async () => {
    const { conn, cluster } = ctx();
    const n = 20;
    const ports = cluster.primaries().map((p) => p.port);
    const [failures, mons] = await watched(ports, () => failAll(conn, "fn-cluster", n));
    assert.equal(new Set(failures).size, n);
    assertOneCallPerJob(mons, "FAILNEXT", "FAIL", n);
  });
});

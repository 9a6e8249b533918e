/**
 * One round trip per job per slot (`COMPLETENEXT`, docs/protocol.md), both wires and a cluster:
 * a busy slot's completion leases its next job in the same call — no pause read, no claim of its
 * own — and obeys what a claim obeys: a paused queue leases nothing, a queue at its concurrency
 * leases nothing (the limited claim's wait), and a reply lost between the completion and the next
 * lease loses neither job (the leased one comes back when its lease expires).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, Queue, Worker } from "../src/index.js";
import { claim, completeNext } from "../src/protocol.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { assertOneCallPerJob, completesAfterLease, sendAndCut, watched } from "./support/fused.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} } };
const keysOf = (q: string) => ["active", "done", "pending", ""].map((t) => `emq:{${q}}:${t}`);

/** Runs `n` jobs through one worker of concurrency 1; resolves with the ids in completion order. */
async function drain(conn: Connection, name: string, n: number): Promise<string[]> {
  const q = new Queue(name, conn);
  await q.addBulk(Array.from({ length: n }, (_, i) => ({ payload: `p${i}` })));
  const completed: string[] = [];
  const worker = new Worker(q, (job) => job.text().toUpperCase(), { ...quiet, concurrency: 1 });
  worker.on("completed", (job) => completed.push(job.id));
  await until(`${n} completions`, () => completed.length === n, 30_000);
  await worker.close();
  return completed;
}

forEachWire("COMPLETENEXT", (ctx) => {
  test("a busy slot completes and receives its next job in one call", async () => {
    const { conn, server } = ctx();
    const n = 30;
    const [completed, mons] = await watched([server.port], () => drain(conn, "cn-busy", n));
    assert.equal(new Set(completed).size, n, "every job once");
    // Each completion leased the next job: the first job the only one claimed on its own (its
    // pause read with it on wire 4); none after a completion.
    assertOneCallPerJob(mons, "COMPLETENEXT", "COMPLETE", n);
    const q = new Queue("cn-busy", conn);
    assert.equal((await q.counts()).completed, n);
  });

  test("a paused queue: the completion happens, nothing is leased", async () => {
    const { conn } = ctx();
    const q = new Queue("cn-paused", conn);
    const [one, two] = await q.addBulk([{ payload: "a" }, { payload: "b" }]);
    const job = await claim(conn, "cn-paused", 30_000);
    assert.equal(job?.id, one!.id);
    await q.pause();
    const next = await completeNext(conn, "cn-paused", one!.id, job!.attempts, "r", 10, 30_000);
    assert.equal(next, null);
    assert.equal((await q.getJob(one!.id))?.state, "completed");
    assert.equal((await q.getJob(two!.id))?.state, "pending");
    assert.equal((await q.counts()).active, 0);
  });

  test("a queue at its concurrency: the completion happens, the claim is limited", async () => {
    const { conn } = ctx();
    const q = new Queue("cn-limited", conn);
    const [one, two, three] = await q.addBulk([{ payload: "a" }, { payload: "b" }, { payload: "c" }]);
    const first = await claim(conn, "cn-limited", 30_000);
    const second = await claim(conn, "cn-limited", 30_000);
    assert.deepEqual([first?.id, second?.id], [one!.id, two!.id]);
    await q.setLimits({ concurrency: 1 });
    const next = await completeNext(conn, "cn-limited", one!.id, first!.attempts, "r", 10, 30_000);
    assert.deepEqual(next, { limited: true, waitMs: 0 });
    assert.equal((await q.getJob(one!.id))?.state, "completed");
    assert.equal((await q.getJob(three!.id))?.state, "pending");
  });

  test("a reply cut between the completion and the next lease loses neither job", async () => {
    const { conn, server, wire } = ctx();
    const name = "cn-cut";
    const q = new Queue(name, conn);
    const [one, two] = await q.addBulk([{ payload: "a" }, { payload: "b" }]);
    const job = await claim(conn, name, 30_000);
    assert.equal(job?.id, one!.id);
    // The call reaches the server; its socket is closed before the reply is read.
    const values = [one!.id, String(job!.attempts), "r", "10", "300"];
    await sendAndCut(server.port, wire, "COMPLETENEXT", keysOf(name), values);
    await until("the completion", async () => (await q.getJob(one!.id))?.state === "completed");
    const state = (await q.getJob(two!.id))?.state;
    assert.ok(state === "active" || state === "pending", `the next job is ${state}`);
    await completesAfterLease(q, two!.id);
    const counts = await q.counts();
    assert.deepEqual([counts.completed, counts.pending, counts.active, counts.dead], [2, 0, 0, 0]);
  });
});

forEachClusterWire("COMPLETENEXT on a cluster", (ctx) => {
  test("a busy slot's completions lease its next jobs on the queue's shard", async () => {
    const { conn, cluster } = ctx();
    const n = 20;
    const ports = cluster.primaries().map((p) => p.port);
    const [completed, mons] = await watched(ports, () => drain(conn, "cn-cluster", n));
    assert.equal(new Set(completed).size, n);
    assertOneCallPerJob(mons, "COMPLETENEXT", "COMPLETE", n);
  });
});

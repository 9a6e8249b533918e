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
import { scriptFor } from "../src/scripts/index.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { type MonitorHandle, monitor } from "./support/monitor.js";
import { connectResp } from "./support/resp.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} } };
const keysOf = (q: string) => ["active", "done", "pending", ""].map((t) => `emq:{${q}}:${t}`);

/**
 * How many times a client (not a script) sent `verb`: `EMQ.<VERB>`, or `EVALSHA` of its script
 * (on wire 4 a script's first `EVALSHA` on a node meets `NOSCRIPT` and is sent again once).
 */
function sent(mons: MonitorHandle[], verb: string): number {
  const sha = scriptFor(verb).sha1;
  return mons
    .flatMap((m) => m.entries())
    .filter((e) => e.client !== "lua")
    .filter((e) => {
      const name = e.args[0]?.toUpperCase();
      return name === `EMQ.${verb}` || (name === "EVALSHA" && e.args[1] === sha);
    }).length;
}

/** The host's pause reads: `HGET emq:{q}:meta paused`. */
function pauseReads(mons: MonitorHandle[]): number {
  return mons
    .flatMap((m) => m.entries())
    .filter((e) => e.client !== "lua" && e.args[0]?.toUpperCase() === "HGET" && e.args[2] === "paused")
    .length;
}

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
    const mon = await monitor(server.port);
    const n = 30;
    let completed: string[];
    try {
      completed = await drain(conn, "cn-busy", n);
    } finally {
      await mon.stop();
    }
    assert.equal(new Set(completed).size, n, "every job once");
    // Each completion leased the next job: n completions, the first job the only one claimed
    // on its own (its pause read with it on wire 4); none after a completion.
    const fused = sent([mon], "COMPLETENEXT");
    assert.ok(fused === n || fused === n + 1, `COMPLETENEXT sent ${fused} times for ${n} jobs`);
    assert.equal(sent([mon], "COMPLETE"), 0);
    assert.ok(sent([mon], "CLAIM") <= 2, `claims of their own: ${sent([mon], "CLAIM")}`);
    assert.ok(pauseReads([mon]) <= 2, `pause reads: ${pauseReads([mon])}`);
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
    const raw = await connectResp(server.port);
    const tail = [...keysOf(name), one!.id, String(job!.attempts), "r", "10", "300"];
    const body = scriptFor("COMPLETENEXT").source;
    const line = wire === 6 ? ["EMQ.COMPLETENEXT", 4, ...tail] : ["EVAL", body, 4, ...tail];
    const lost = raw.send(line).catch(() => null);
    await raw.close();
    await lost;
    await until("the completion", async () => (await q.getJob(one!.id))?.state === "completed");
    const state = (await q.getJob(two!.id))?.state;
    assert.ok(state === "active" || state === "pending", `the next job is ${state}`);
    // A worker takes it back when its lease ends (the reaper), and runs it.
    const completed: string[] = [];
    const worker = new Worker(q, () => "ok", { ...quiet, reapEveryMs: 100, promoteEveryMs: 50 });
    worker.on("completed", (j) => completed.push(j.id));
    await until("the next job completed", () => completed.includes(two!.id), 15_000);
    await worker.close();
    const counts = await q.counts();
    assert.deepEqual([counts.completed, counts.pending, counts.active, counts.dead], [2, 0, 0, 0]);
  });
});

forEachClusterWire("COMPLETENEXT on a cluster", (ctx) => {
  test("a busy slot's completions lease its next jobs on the queue's shard", async () => {
    const { conn, cluster } = ctx();
    const mons = await Promise.all(cluster.primaries().map((p) => monitor(p.port)));
    const n = 20;
    let completed: string[];
    try {
      completed = await drain(conn, "cn-cluster", n);
    } finally {
      await Promise.all(mons.map((m) => m.stop()));
    }
    assert.equal(new Set(completed).size, n);
    const fused = sent(mons, "COMPLETENEXT");
    assert.ok(fused === n || fused === n + 1, `COMPLETENEXT sent ${fused} times for ${n} jobs`);
    assert.ok(sent(mons, "CLAIM") <= 2, `claims of their own: ${sent(mons, "CLAIM")}`);
  });
});

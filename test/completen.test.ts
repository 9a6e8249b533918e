/**
 * Settlements of several jobs in one call (`COMPLETEN`, docs/protocol.md), both wires and a
 * cluster: each job completed as `COMPLETE` would, a stale token among them refused by name at
 * its place without spoiling the others, the freed slots' next jobs leased in the same call under
 * the pause flag, and a queue of lanes settled lane by lane.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { LeaseLostError, Queue, Worker } from "../src/index.js";
import { sent, watched } from "./support/fused.js";
import { until } from "./support/until.js";
import { claimBatch, completeMany } from "../src/protocol.js";
import { parseEntries } from "../src/events/entry.js";
import { laneNames } from "../src/lanes/naming.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { forEachWire } from "./support/wires.js";
import type { Connection } from "../src/index.js";

async function leasedThree(conn: Connection, name: string) {
  const q = new Queue(name, conn);
  await q.addBulk(["a", "b", "c", "d", "e"].map((payload) => ({ payload })));
  const { jobs } = await claimBatch(conn, name, 30_000, 3);
  assert.equal(jobs.length, 3);
  return { q, jobs };
}

function suite(ctx: () => { conn: Connection }, prefix: string) {
  test("a stale token among three: the others complete, the stale one is refused by name", async () => {
    const { conn } = ctx();
    const name = `${prefix}-stale`;
    const { q, jobs } = await leasedThree(conn, name);
    const [a, b, c] = jobs;
    const got = await completeMany(
      conn,
      name,
      [
        { id: a!.id, token: a!.attempts, result: "ra" },
        { id: b!.id, token: b!.attempts + 1, result: "rb" },
        { id: c!.id, token: c!.attempts, result: "rc" },
      ],
      10,
      3,
      30_000,
    );
    assert.equal(got.refused[0], null);
    assert.equal(got.refused[2], null);
    assert.ok(got.refused[1] instanceof LeaseLostError, String(got.refused[1]));
    assert.equal(got.refused[1].message, "ERR EMQ.COMPLETEN stale lease token");
    assert.equal((got.refused[1] as LeaseLostError).reason, "stale token");
    // Three claims asked, two jobs left to lease.
    assert.equal(got.jobs.length, 2);
    assert.equal(got.limited, null);
    assert.equal((await q.getJob(a!.id))?.state, "completed");
    assert.equal((await q.getJob(b!.id))?.state, "active");
    assert.equal((await q.getJob(c!.id))?.state, "completed");
    assert.equal((await q.counts()).active, 3);
    // The bus: one entry per completion that landed, each carrying the job leased in its place.
    const key = `emq:{${name}}:events`;
    const entries = ((await conn.send("XRANGE", [key, "-", "+"], key)) as [unknown, unknown[]][]).map(
      ([id, fields]) => [String(id), fields.map((f) => Buffer.from(f as Buffer))] as const,
    );
    const events = entries.flatMap(([id, fields]) => parseEntries(id, fields));
    const after = events.slice(events.findIndex((e) => e.kind === "completed"));
    assert.deepEqual(
      after.map((e) => [e.kind, e.jobId]),
      [
        ["completed", a!.id],
        ["active", got.jobs[0]!.id],
        ["completed", c!.id],
        ["active", got.jobs[1]!.id],
      ],
    );
    assert.equal(
      entries.filter(([, f]) => f.map(String).join(" ").startsWith("event active")).length,
      3,
      "the three claims before the call wrote their active entries; the call wrote none",
    );
  });

  test("a paused queue: the completions happen, nothing is leased", async () => {
    const { conn } = ctx();
    const name = `${prefix}-paused`;
    const { q, jobs } = await leasedThree(conn, name);
    await q.pause();
    const got = await completeMany(
      conn,
      name,
      jobs.map((j) => ({ id: j.id, token: j.attempts, result: "r" })),
      10,
      3,
      30_000,
    );
    assert.deepEqual(got.refused, [null, null, null]);
    assert.deepEqual(got.jobs, []);
    const counts = await q.counts();
    assert.equal(counts.active, 0);
    assert.equal(counts.completed, 3);
    assert.equal(counts.pending, 2);
  });

  test("a queue at its concurrency: the claims stop at the limit", async () => {
    const { conn } = ctx();
    const name = `${prefix}-limited`;
    const { q, jobs } = await leasedThree(conn, name);
    await q.setLimits({ concurrency: 2 });
    const [a, b] = jobs;
    const got = await completeMany(
      conn,
      name,
      [a!, b!].map((j) => ({ id: j.id, token: j.attempts, result: "r" })),
      0,
      2,
      30_000,
    );
    assert.deepEqual(got.refused, [null, null]);
    // One slot free under concurrency 2 (the third job still active): one leased, then limited.
    assert.equal(got.jobs.length, 1);
    assert.deepEqual(got.limited, { limited: true, waitMs: 0 });
  });

  test("bad input is refused before anything is written", async () => {
    const { conn } = ctx();
    const name = `${prefix}-bad`;
    const { q, jobs } = await leasedThree(conn, name);
    await assert.rejects(completeMany(conn, name, [], 10, 1, 30_000), /completions/);
    await assert.rejects(
      completeMany(conn, name, [{ id: jobs[0]!.id, token: 0, result: "r" }], 10, 1, 30_000),
      /token/,
    );
    assert.equal((await q.counts()).active, 3);
  });
}

forEachWire("COMPLETEN", (ctx) => {
  suite(ctx, "cm");

  test("a batch handler's results settle in one call, not one per job", async () => {
    const { conn, server } = ctx();
    const q = new Queue("cm-batch", conn);
    await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: `p${i}` })));
    const completed: string[] = [];
    const [, mons] = await watched([server.port], async () => {
      const worker = new Worker(q, (jobs: unknown[]) => jobs.map(() => "r"), {
        logger: { warn: () => {} },
        batch: { size: 5, maxWaitMs: 50 },
      });
      worker.on("completed", (job) => completed.push(job.id));
      await until("10 completions", () => completed.length === 10, 30_000);
      await worker.close();
    });
    assert.equal(new Set(completed).size, 10);
    assert.equal((await q.counts()).completed, 10);
    const many = sent(mons, "COMPLETEN");
    assert.ok(many >= 2 && many <= 5, `COMPLETEN sent ${many} times for 10 jobs in batches of 5`);
    assert.ok(sent(mons, "COMPLETE") <= 10 - 2 * many, `COMPLETE sent ${sent(mons, "COMPLETE")} times`);
  });

  test("a queue of lanes: each lane's jobs settled in its own call", async () => {
    const { conn } = ctx();
    const q = new Queue("cm-lanes", conn, { lanes: 3 });
    await q.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: `p${i}` })));
    for (const lane of laneNames("cm-lanes", 3)) {
      const { jobs } = await claimBatch(conn, lane, 30_000, 6);
      if (jobs.length === 0) continue;
      const got = await completeMany(
        conn,
        lane,
        jobs.map((j) => ({ id: j.id, token: j.attempts, result: "r" })),
        10,
        jobs.length,
        30_000,
      );
      assert.ok(got.refused.every((r) => r === null));
    }
    const counts = await q.counts();
    assert.equal(counts.completed, 6);
    assert.equal(counts.active, 0);
  });
});

forEachClusterWire("COMPLETEN on a cluster", (ctx) => suite(ctx, "cmc"));

/**
 * Leasing completions ready together go out together (src/worker/coalesce.ts), both wires and a
 * cluster: busy slots whose completions are ready in the same run settle and lease their next
 * jobs in one `COMPLETEN`, not one `COMPLETENEXT` each; each slot gets the job, the limited
 * claim's wait or the nothing its own `COMPLETENEXT` would have; a refused completion is its own
 * error, and the job its place leased is handed to `spare`, not lost.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, LeaseLostError, Queue, Worker } from "../src/index.js";
import { type ClaimedJob, claimBatch } from "../src/protocol.js";
import { completeLeasingTogether } from "../src/worker/coalesce.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { sent, watched } from "./support/fused.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

async function leased(conn: Connection, name: string, waiting: number, count: number) {
  const q = new Queue(name, conn);
  await q.addBulk(Array.from({ length: waiting }, (_, i) => ({ payload: `p${i}` })));
  const { jobs } = await claimBatch(conn, name, 30_000, count);
  assert.equal(jobs.length, count);
  return { q, jobs };
}

/** The leasing completions of `jobs` (a token moved by `skew[i]`), sent in one synchronous run. */
function together(
  conn: Connection,
  name: string,
  jobs: ClaimedJob[],
  spare: ClaimedJob[],
  skew: number[] = [],
) {
  return jobs.map((j, i) =>
    completeLeasingTogether(conn, name, j.id, j.attempts + (skew[i] ?? 0), `r${i}`, 10, 30_000, (s) =>
      spare.push(s),
    ).then(
      (next) => ({ next, err: null }),
      (err: unknown) => ({ next: null, err }),
    ),
  );
}

function suite(ctx: () => { conn: Connection }, prefix: string) {
  test("three in one run, a stale token among them: two lease, the stale one is refused, its place's job is spare", async () => {
    const { conn } = ctx();
    const name = `${prefix}-stale`;
    const { q, jobs } = await leased(conn, name, 6, 3);
    const spare: ClaimedJob[] = [];
    const [a, b, c] = await Promise.all(together(conn, name, jobs, spare, [0, 1, 0]));
    assert.ok(b!.err instanceof LeaseLostError, String(b!.err));
    assert.equal(b!.err.message, "ERR EMQ.COMPLETEN stale lease token");
    const next = [a!.next, c!.next].map((n) => (n && "id" in n ? n.id : null));
    assert.equal(spare.length, 1);
    const fresh = new Set([...next, spare[0]!.id]);
    assert.equal(fresh.size, 3, "three distinct jobs leased");
    for (const j of jobs) assert.ok(!fresh.has(j.id), `${j.id} leased again`);
    assert.equal((await q.getJob(jobs[0]!.id))?.state, "completed");
    assert.equal((await q.getJob(jobs[1]!.id))?.state, "active");
    assert.equal((await q.getJob(jobs[2]!.id))?.state, "completed");
    const counts = await q.counts();
    assert.deepEqual([counts.active, counts.pending, counts.completed], [4, 0, 2]);
  });

  test("a queue at its concurrency: the first slot leases, the next is told the limited claim's wait", async () => {
    const { conn } = ctx();
    const name = `${prefix}-limited`;
    const { q, jobs } = await leased(conn, name, 5, 3);
    await q.setLimits({ concurrency: 2 });
    const spare: ClaimedJob[] = [];
    const [a, b] = await Promise.all(together(conn, name, jobs.slice(0, 2), spare));
    assert.equal(a!.err, null);
    assert.ok(a!.next && "id" in a!.next, `first slot got ${JSON.stringify(a!.next)}`);
    assert.deepEqual(b!.next, { limited: true, waitMs: 0 });
    assert.deepEqual(spare, []);
    assert.equal((await q.counts()).active, 2);
  });

  test("a paused queue: every completion lands, no slot is given a job", async () => {
    const { conn } = ctx();
    const name = `${prefix}-paused`;
    const { q, jobs } = await leased(conn, name, 5, 3);
    await q.pause();
    const spare: ClaimedJob[] = [];
    const got = await Promise.all(together(conn, name, jobs, spare));
    assert.deepEqual(
      got.map((g) => [g.err, g.next]),
      [
        [null, null],
        [null, null],
        [null, null],
      ],
    );
    const counts = await q.counts();
    assert.deepEqual([counts.completed, counts.active, counts.pending], [3, 0, 2]);
  });
}

forEachWire("leasing completions together", (ctx) => {
  suite(ctx, "lt");

  test("busy slots: completions ready together settle and lease in one call, each job once", async () => {
    const { conn, server } = ctx();
    const n = 200;
    const q = new Queue("lt-busy", conn);
    await q.addBulk(Array.from({ length: n }, (_, i) => ({ payload: `p${i}` })));
    const completed: string[] = [];
    const [, mons] = await watched([server.port], async () => {
      const worker = new Worker(q, () => "r", { logger: { warn: () => {} }, concurrency: 10 });
      worker.on("completed", (job) => completed.push(job.id));
      await until(`${n} completions`, () => completed.length === n, 60_000);
      await worker.close();
    });
    assert.equal(new Set(completed).size, n, "every job once");
    assert.equal((await q.counts()).completed, n);
    const many = sent(mons, "COMPLETEN");
    const calls = many + sent(mons, "COMPLETENEXT") + sent(mons, "COMPLETE");
    assert.ok(many > 0, "no COMPLETEN sent");
    assert.ok(calls <= n / 2, `${calls} settling calls for ${n} jobs at concurrency 10`);
  });
});

forEachClusterWire("leasing completions together on a cluster", (ctx) => suite(ctx, "ltc"));

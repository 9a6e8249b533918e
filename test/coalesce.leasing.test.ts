/**
 * Leasing completions ready together go out together (src/worker/coalesce.ts), both wires and a
 * cluster: busy slots whose completions are ready in the same run settle and lease their next
 * jobs in `COMPLETEN` calls of several, not one `COMPLETENEXT` each (a group is cut so several
 * calls stay in the pipeline: `leasingCallSize`); each slot gets the job, the limited
 * claim's wait or the nothing its own `COMPLETENEXT` would have; a refused completion is its own
 * error, and the job its place leased is handed to `spare`, not lost.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, LeaseLostError, Queue, Worker } from "../src/index.js";
import { MAX_COMPLETIONS } from "../src/jobs.js";
import { type ClaimedJob, claimBatch } from "../src/protocol.js";
import { scriptFor } from "../src/scripts/index.js";
import { completeLeasingTogether, leasingCallSize } from "../src/worker/coalesce.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { sent, watched } from "./support/fused.js";
import type { MonitorHandle } from "./support/monitor.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

async function leased(conn: Connection, name: string, waiting: number, count: number) {
  const q = new Queue(name, conn);
  await q.addBulk(Array.from({ length: waiting }, (_, i) => ({ payload: `p${i}` })));
  const { jobs } = await claimBatch(conn, name, 30_000, count);
  assert.equal(jobs.length, count);
  return { q, jobs };
}

/**
 * The `next` of every `COMPLETEN` a client sent: `EMQ.COMPLETEN <numkeys> <keys…> <keep> <leaseMs>
 * <next> …`, or `EVALSHA <sha> <numkeys> …` of its script, in that order.
 */
function leasedInCalls(mons: MonitorHandle[]): number[] {
  const sha = scriptFor("COMPLETEN").sha1;
  return mons
    .flatMap((m) => m.entries())
    .filter((e) => e.client !== "lua")
    .flatMap((e) => {
      const name = e.args[0]?.toUpperCase();
      const at = name === "EMQ.COMPLETEN" ? 1 : name === "EVALSHA" && e.args[1] === sha ? 2 : -1;
      if (at < 0) return [];
      return [Number(e.args[at + 1 + Number(e.args[at]) + 2])];
    });
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
    completeLeasingTogether(conn, name, j.id, j.attempts + (skew[i] ?? 0), `r${i}`, 1000, 30_000, (s) =>
      spare.push(s),
    ).then(
      (next) => ({ next, err: null }),
      (err: unknown) => ({ next: null, err }),
    ),
  );
}

/** Enough leasing completions ready together that the group goes as calls of more than one. */
const GROUP = (() => {
  let n = 2;
  while (n < MAX_COMPLETIONS && leasingCallSize(n) < 2) n++;
  return n;
})();

test("leasingCallSize: at least one per call, never more than a call takes, several calls for a large group", () => {
  let before = 1;
  for (let ready = 1; ready <= 2 * MAX_COMPLETIONS; ready++) {
    const size = leasingCallSize(ready);
    assert.ok(size >= 1 && size <= Math.min(ready, MAX_COMPLETIONS), `${size} per call for ${ready}`);
    assert.ok(size >= before, `${size} per call for ${ready} after ${before} for ${ready - 1}`);
    before = size;
  }
  assert.equal(leasingCallSize(1), 1, "a lone completion is a call of its own");
  assert.ok(Math.ceil(100 / leasingCallSize(100)) > 1, "a group of 100 goes as one call");
  assert.ok(leasingCallSize(100) > 1, "a group of 100 goes one completion per call");
});

function suite(ctx: () => { conn: Connection }, prefix: string) {
  test("a group in one run, a stale token among them: the others lease, the stale one is refused, its place's job is spare", async () => {
    const { conn } = ctx();
    const name = `${prefix}-stale`;
    const { q, jobs } = await leased(conn, name, 2 * GROUP, GROUP);
    const spare: ClaimedJob[] = [];
    const got = await Promise.all(together(conn, name, jobs, spare, [0, 1]));
    const stale = got[1]!;
    assert.ok(stale.err instanceof LeaseLostError, String(stale.err));
    assert.equal(stale.err.message, "ERR EMQ.COMPLETEN stale lease token");
    const others = got.filter((_, i) => i !== 1);
    assert.deepEqual(
      others.map((g) => g.err),
      others.map(() => null),
    );
    const next = others.map((g) => (g.next && "id" in g.next ? g.next.id : null));
    assert.equal(spare.length, 1);
    const fresh = new Set([...next, spare[0]!.id]);
    assert.equal(fresh.size, GROUP, `${GROUP} distinct jobs leased`);
    for (const j of jobs) assert.ok(!fresh.has(j.id), `${j.id} leased again`);
    for (const [i, j] of jobs.entries())
      assert.equal((await q.getJob(j.id))?.state, i === 1 ? "active" : "completed", `job ${i}`);
    const counts = await q.counts();
    assert.deepEqual([counts.active, counts.pending, counts.completed], [GROUP + 1, 0, GROUP - 1]);
  });

  test("a queue one short of its concurrency: the call's completions land first, so only its second slot is told the wait", async () => {
    const { conn } = ctx();
    const name = `${prefix}-limited`;
    const { q, jobs } = await leased(conn, name, 3 * GROUP, GROUP);
    await q.setLimits({ concurrency: GROUP - 1 });
    const spare: ClaimedJob[] = [];
    const got = await Promise.all(together(conn, name, jobs, spare));
    assert.deepEqual(
      got.map((g) => g.err),
      got.map(() => null),
    );
    const told = got.flatMap((g, i) => (g.next && "limited" in g.next ? [i] : []));
    // One COMPLETENEXT each would tell the first slot (its completion alone leaves the queue at
    // its limit); a call of two lands both completions before it leases.
    assert.deepEqual(told, [1], JSON.stringify(got.map((g) => g.next)));
    assert.ok(
      got.every((g, i) => i === 1 || (g.next && "id" in g.next)),
      "every other slot got a job",
    );
    assert.deepEqual(spare, []);
    assert.equal((await q.counts()).active, GROUP - 1);
  });

  test("a paused queue: every completion lands, no slot is given a job", async () => {
    const { conn } = ctx();
    const name = `${prefix}-paused`;
    const { q, jobs } = await leased(conn, name, GROUP + 4, GROUP);
    await q.pause();
    const spare: ClaimedJob[] = [];
    const got = await Promise.all(together(conn, name, jobs, spare));
    assert.deepEqual(
      got.map((g) => [g.err, g.next]),
      got.map(() => [null, null]),
    );
    assert.deepEqual(spare, []);
    const counts = await q.counts();
    assert.deepEqual([counts.completed, counts.active, counts.pending], [GROUP, 0, 4]);
  });
}

forEachWire("leasing completions together", (ctx) => {
  suite(ctx, "lt");

  test("busy slots: completions ready together settle and lease in calls of several, each job once", async () => {
    const { conn, server } = ctx();
    const n = 1000;
    const q = new Queue("lt-busy", conn);
    await q.addBulk(Array.from({ length: n }, (_, i) => ({ payload: `p${i}` })));
    const completed: string[] = [];
    const [, mons] = await watched([server.port], async () => {
      const worker = new Worker(q, () => "r", { logger: { warn: () => {} }, concurrency: 100 });
      worker.on("completed", (job) => completed.push(job.id));
      await until(`${n} completions`, () => completed.length === n, 60_000);
      await worker.close();
    });
    assert.equal(new Set(completed).size, n, "every job once");
    assert.equal((await q.counts()).completed, n);
    const leasingMany = leasedInCalls(mons).filter((next) => next > 1);
    assert.ok(leasingMany.length > 0, "no COMPLETEN leased for more than one slot");
    const calls = sent(mons, "COMPLETEN") + sent(mons, "COMPLETENEXT") + sent(mons, "COMPLETE");
    assert.ok(calls < n, `${calls} settling calls for ${n} jobs at concurrency 100`);
  });
});

forEachClusterWire("leasing completions together on a cluster", (ctx) => suite(ctx, "ltc"));

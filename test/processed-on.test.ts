/**
 * A read row's `processedOn`, both wires, on one server and on a local cluster: every lease writes
 * the row's `processed_on` (server ms, the now its deadline counts from, docs/protocol.md "The job
 * row"), so `getJob` reports when the current or last attempt was leased — equal to the handler's
 * own `job.processedOn`, between a `TIME` read before the claim and one after, kept after the job
 * completes or dies, the last attempt's after a retry; a job never claimed has none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, type Job, Queue, Worker } from "../src/index.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };

/** The server's clock in ms, as a lease reads it (`TIME`: seconds * 1000 + floor(µs / 1000)). */
async function serverMs(conn: Connection): Promise<number> {
  const [s, us] = (await conn.send("TIME", [])) as Buffer[];
  return Number(String(s)) * 1000 + Math.floor(Number(String(us)) / 1000);
}

function suite(ctx: () => { conn: Connection }, prefix: string) {
  test("getJob reports processedOn: the lease's server time while active, kept after completion; none before any claim", async () => {
    const { conn } = ctx();
    const q = new Queue(`${prefix}-po`, conn);
    const idle = new Queue(`${prefix}-po-idle`, conn);
    const { id } = await q.add({ n: 1 });
    const never = await idle.add({ n: 2 });
    assert.equal((await q.getJob(id))?.processedOn, undefined, "a pending job never claimed has none");

    const before = await serverMs(conn);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen: Job[] = [];
    let completed = 0;
    const worker = new Worker(
      q,
      async (job) => {
        seen.push(job);
        await gate;
        return "ok";
      },
      quiet,
    );
    worker.on("completed", () => completed++);
    try {
      await until("the job is running", () => seen.length === 1);
      const after = await serverMs(conn);
      const active = await q.getJob(id);
      assert.equal(active?.state, "active");
      const on = active?.processedOn;
      assert.equal(typeof on, "number", `processedOn ${on}`);
      assert.ok(on! >= before && on! <= after, `processedOn ${on} not in [${before}, ${after}]`);
      assert.equal(on, seen[0]!.processedOn, "the row's processed_on is the claim's lease time");
      release();
      await until("the job completed", () => completed === 1);
      const done = await q.getJob(id);
      assert.equal(done?.state, "completed");
      assert.equal(done?.processedOn, on, "kept after completion");
      assert.ok(done!.finishedOn! >= on!, `finishedOn ${done?.finishedOn} before processedOn ${on}`);
      const [listed] = await q.getJobs("completed");
      assert.deepEqual([listed?.id, listed?.processedOn], [id, on]);
    } finally {
      release();
      await worker.close();
    }
    const idleRow = await idle.getJob(never.id);
    assert.deepEqual([idleRow?.state, idleRow?.processedOn], ["pending", undefined]);
  });

  test("after a retry the row keeps the last attempt's processedOn, through to dead", async () => {
    const { conn } = ctx();
    const q = new Queue(`${prefix}-po-retry`, conn);
    const { id } = await q.add({}, { maxAttempts: 2, backoff: 0 });
    const seen: number[] = [];
    let failed = 0;
    const worker = new Worker(
      q,
      (job) => {
        seen.push(job.processedOn);
        throw new Error(`no ${job.attemptsMade}`);
      },
      quiet,
    );
    worker.on("failed", () => failed++);
    try {
      await until("both attempts failed", () => failed === 2);
    } finally {
      await worker.close();
    }
    const dead = await q.getJob(id);
    assert.equal(dead?.state, "dead");
    assert.equal(seen.length, 2);
    assert.ok(seen[1]! >= seen[0]!, `attempts leased at ${seen}`);
    assert.equal(dead?.processedOn, seen[1], "the last attempt's lease time");
  });
}

forEachWire("processedOn from the row", (ctx) => suite(ctx, "one"));
forEachClusterWire("processedOn from the row, on a cluster", (ctx) => suite(ctx, "cl"));

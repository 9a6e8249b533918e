/**
 * `CLAIMN` through the host (`claimBatch`), both wires: up to `count` jobs leased in one call, each
 * with its own lease token and deadline, exactly as `count` claims in a row — lowest id first, a
 * paused queue leases nothing, flow control (the queue's concurrency, a group's) applied claim by
 * claim, the count checked before anything is sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgumentError, Queue } from "../src/index.js";
import { claimBatch } from "../src/protocol.js";
import { forEachWire } from "./support/wires.js";

forEachWire("CLAIMN", (ctx) => {
  test("leases up to count jobs in order, each under its own lease; the rest on the next call", async () => {
    const { conn } = ctx();
    const q = new Queue("cn-batch", conn);
    const ids = (await q.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: `p${i}` })))).map(
      (j) => j.id,
    );
    const first = await claimBatch(conn, "cn-batch", 30_000, 3);
    assert.deepEqual(
      first.jobs.map((j) => [j.id, j.payload.toString(), j.attempts]),
      ids.slice(0, 3).map((id, i) => [id, `p${i}`, 1]),
    );
    assert.equal(first.limited, null);
    for (const job of first.jobs) assert.ok(job.deadline > Date.now() + 20_000, "a lease of its own");
    const rest = await claimBatch(conn, "cn-batch", 30_000, 5);
    assert.deepEqual(
      rest.jobs.map((j) => j.id),
      ids.slice(3),
    );
    assert.deepEqual(await claimBatch(conn, "cn-batch", 30_000, 5), { jobs: [], limited: null });
    assert.equal((await q.counts()).active, 5);
  });

  test("a paused queue leases nothing; resumed, it leases", async () => {
    const { conn } = ctx();
    const q = new Queue("cn-paused", conn);
    await q.addBulk([{ payload: "a" }, { payload: "b" }]);
    await q.pause();
    assert.deepEqual(await claimBatch(conn, "cn-paused", 30_000, 2), { jobs: [], limited: null });
    assert.equal((await q.counts()).pending, 2);
    await q.resume();
    assert.equal((await claimBatch(conn, "cn-paused", 30_000, 2)).jobs.length, 2);
  });

  test("flow control claim by claim: the queue's concurrency ends the batch limited, a full group is skipped", async () => {
    const { conn } = ctx();
    const q = new Queue("cn-limits", conn);
    await q.addBulk([{ payload: "a" }, { payload: "b" }, { payload: "c" }]);
    await q.setLimits({ concurrency: 2 });
    const limited = await claimBatch(conn, "cn-limits", 30_000, 3);
    assert.equal(limited.jobs.length, 2);
    assert.deepEqual(limited.limited, { limited: true, waitMs: 0 });

    const g = new Queue("cn-groups", conn);
    await g.setLimits({ group: { concurrency: 1 } });
    const [g1, , h1] = await g.addBulk([
      { payload: "g1", opts: { group: "g" } },
      { payload: "g2", opts: { group: "g" } },
      { payload: "h1", opts: { group: "h" } },
    ]);
    const grouped = await claimBatch(conn, "cn-groups", 30_000, 3);
    assert.deepEqual(
      grouped.jobs.map((j) => j.id),
      [g1!.id, h1!.id],
    );
  });

  test("a count outside 1–10000 is refused before anything is sent", async () => {
    const { conn } = ctx();
    const q = new Queue("cn-count", conn);
    await q.add("a");
    for (const count of [0, 10_001, 1.5]) {
      await assert.rejects(claimBatch(conn, "cn-count", 30_000, count), (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError);
        assert.match(err.message, /count.*must be an integer from 1 to 10000/);
        return true;
      });
    }
    assert.equal((await q.counts()).pending, 1);
  });
});

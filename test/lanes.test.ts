/**
 * Laned queues: the naming rule (pure), and on both wires against real servers — round-robin and
 * keyed admission, a worker that claims across lanes fairly and never polls empty lanes, the
 * operator calls across lanes, and a lane count changed on a live queue.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { InvalidArgumentError, type Job, type LanedCounts, Queue, Worker } from "../src/index.js";
import { laneNames, laneOfKey, MAX_LANED_NAME_BYTES, SLOTS, sliceOf } from "../src/lanes/naming.js";
import { queueKey, slot } from "../src/protocol.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";

/** A laneKey that the rule sends to lane `i` of `k`. */
function keyFor(i: number, k: number): string {
  for (let n = 0; ; n++) if (laneOfKey(`key-${n}`, k) === i) return `key-${n}`;
}

describe("the lane naming rule", () => {
  test("one lane is the queue itself", () => {
    assert.deepEqual(laneNames("emails", 1), ["emails"]);
  });

  test("lane i of k lies in the i-th of k equal slot slices, named <q>@<k>.<i>.<t>", () => {
    for (const k of [2, 3, 12, 100]) {
      const names = laneNames("emails", k);
      assert.equal(names.length, k);
      assert.equal(new Set(names).size, k);
      names.forEach((lane, i) => {
        assert.match(lane, new RegExp(`^emails@${k}\\.${i}\\.\\d+$`));
        const [from, to] = sliceOf(i, k);
        const s = slot(queueKey(lane, ""));
        assert.ok(s >= from && s < to, `${lane}: slot ${s} in [${from}, ${to})`);
        // t is the smallest that lands there: every smaller t lands outside.
        const t = Number(lane.split(".").at(-1));
        for (let u = 0; u < t; u++) {
          const other = slot(queueKey(`emails@${k}.${i}.${u}`, ""));
          assert.ok(other < from || other >= to);
        }
      });
      assert.equal(sliceOf(k - 1, k)[1], SLOTS);
    }
  });

  test("a laned queue's name leaves room for the suffix; lanes outside 1–256 are refused", () => {
    assert.throws(() => laneNames("x".repeat(MAX_LANED_NAME_BYTES + 1), 2), InvalidArgumentError);
    laneNames("x".repeat(MAX_LANED_NAME_BYTES), 256);
    for (const k of [0, 257, 1.5]) assert.throws(() => laneNames("q", k), InvalidArgumentError);
  });

  test("a laneKey always picks the same lane; keys spread over every lane", () => {
    assert.equal(laneOfKey("order-42", 12), laneOfKey("order-42", 12));
    const hit = new Set(Array.from({ length: 500 }, (_, n) => laneOfKey(`order-${n}`, 12)));
    assert.equal(hit.size, 12);
  });
});

forEachWire("laned queues", (ctx) => {
  test("adds go round-robin over the lanes; counts sum them and show each lane", async () => {
    const q = new Queue("ln1", ctx().conn, { lanes: 4 });
    await q.addBulk(Array.from({ length: 20 }, (_, i) => ({ payload: `b${i}` })));
    for (let i = 0; i < 8; i++) await q.add(`a${i}`);
    const counts = (await q.counts()) as LanedCounts;
    assert.equal(counts.pending, 28);
    assert.deepEqual(
      laneNames("ln1", 4).map((lane) => counts.lanes[lane]?.pending),
      [7, 7, 7, 7],
    );
    assert.equal(counts.lanes.ln1?.pending, 0, "the plain queue is drained too, and empty");
  });

  test("a worker runs every job of every lane once; getJob, remove and retry find the lane", async () => {
    const q = new Queue("ln2", ctx().conn, { lanes: 3 });
    const added = await q.addBulk(
      Array.from({ length: 30 }, (_, i) => ({ payload: i < 3 ? "fail" : `j${i}` })),
    );
    const runs = new Map<string, number>();
    const worker = new Worker(
      q,
      (job: Job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        assert.ok(laneNames("ln2", 3).includes(job.lane));
        assert.equal(job.queue, "ln2");
        if (job.text() === "fail") throw new Error("no");
      },
      { concurrency: 4, attempts: 1, idleCheckMs: 100 },
    );
    await until("27 completed", async () => ((await q.counts()) as LanedCounts).completed === 27, 20_000);
    await until("3 dead", async () => ((await q.counts()) as LanedCounts).dead === 3, 20_000);
    assert.equal(runs.size, 30);
    assert.ok([...runs.values()].every((n) => n === 1));
    const failed = added[0]!.id;
    const info = await q.getJob(failed);
    assert.equal(info?.state, "dead");
    assert.ok(laneNames("ln2", 3).includes(info!.lane));
    await q.retry(failed, 1);
    await until(
      "retried",
      async () => (await q.getJob(failed))?.state === "dead" && runs.get(failed) === 2,
      20_000,
    );
    assert.equal(await q.remove(failed), true);
    assert.equal(await q.getJob(failed), null);
    await worker.close();
  });

  test("pause and resume act on every lane; a paused laned queue runs nothing", async () => {
    const q = new Queue("ln3", ctx().conn, { lanes: 3 });
    assert.equal(await q.pause(), true);
    await q.addBulk(Array.from({ length: 9 }, (_, i) => ({ payload: `p${i}` })));
    const done: string[] = [];
    const worker = new Worker(q, (job: Job) => void done.push(job.id), { concurrency: 3, idleCheckMs: 50 });
    await worker.ready;
    await sleep(200);
    assert.equal(done.length, 0);
    assert.equal(((await q.counts()) as LanedCounts).paused, true);
    assert.equal(await q.resume(), true);
    await until("9 done after resume", () => done.length === 9, 10_000);
    await worker.close();
  });

  test("a laneKey keeps its jobs on one lane, in order", async () => {
    const q = new Queue("ln4", ctx().conn, { lanes: 4 });
    for (let i = 0; i < 10; i++) await q.add(`k${i}`, { laneKey: "customer-7" });
    const lane = laneNames("ln4", 4)[laneOfKey("customer-7", 4)]!;
    const counts = (await q.counts()) as LanedCounts;
    assert.equal(counts.lanes[lane]?.pending, 10);
    const seen: string[] = [];
    const worker = new Worker(q, (job: Job) => void seen.push(job.text()), { concurrency: 1 });
    await until("10 done", () => seen.length === 10, 10_000);
    await worker.close();
    assert.deepEqual(
      seen,
      Array.from({ length: 10 }, (_, i) => `k${i}`),
    );
  });

  test("fairness: one lane far fuller than the others does not hold their jobs back", async () => {
    const k = 4;
    const q = new Queue("ln5", ctx().conn, { lanes: k });
    await q.addBulk(
      Array.from({ length: 300 }, (_, i) => ({ payload: `big${i}`, opts: { laneKey: keyFor(0, k) } })),
    );
    for (let lane = 1; lane < k; lane++) {
      await q.addBulk(
        Array.from({ length: 10 }, (_, i) => ({
          payload: `small${lane}-${i}`,
          opts: { laneKey: keyFor(lane, k) },
        })),
      );
    }
    const order: string[] = [];
    const worker = new Worker(q, (job: Job) => void order.push(job.text()), { concurrency: 1 });
    await until("330 done", () => order.length === 330, 30_000);
    await worker.close();
    const lastSmall = order.findLastIndex((p) => p.startsWith("small"));
    // In turn: each round takes one job of every lane that holds work, so the 30 small jobs are
    // done within the first 10 rounds of 4 claims.
    assert.ok(lastSmall < 10 * k, `the last small job ran at ${lastSmall}`);
  });

  test("an idle laned worker does not poll its empty lanes", async () => {
    const { server, wire } = ctx();
    const q = new Queue("ln6", ctx().conn, { lanes: 8 });
    const idleCheckMs = 300;
    const worker = new Worker(q, () => {}, {
      concurrency: 4,
      idleCheckMs,
      promoteEveryMs: 60_000,
      reapEveryMs: 60_000,
    });
    await worker.ready;
    await sleep(200);
    const claims = async () => {
      const stats = String(await server.cli("INFO", "commandstats"));
      // A worker's claims: EMQ.CLAIMN (EMQ.CLAIM with no batch claim); on wire 4 their EVALSHAs.
      const names = wire === 6 ? ["emq.claim", "emq.claimn"] : ["evalsha"];
      const calls = (name: string) =>
        Number(new RegExp(`cmdstat_${name.replace(".", "\\.")}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return names.reduce((sum, name) => sum + calls(name), 0);
    };
    const before = await claims();
    const t0 = Date.now();
    await sleep(1500);
    const elapsed = Date.now() - t0;
    const made = (await claims()) - before;
    await worker.close();
    // At most one probe round (one claim per lane) per idleCheckMs, plus one in progress.
    const bound = 8 * (Math.ceil(elapsed / idleCheckMs) + 1);
    assert.ok(made <= bound, `${made} claims in ${elapsed} ms (bound ${bound})`);
    await q.add("wake");
    const w2 = new Worker(q, () => {}, { idleCheckMs: 60_000 });
    await until("the job ran", async () => ((await q.counts()) as LanedCounts).completed === 1, 10_000);
    await w2.close();
  });

  test("a lane count changed on a live queue: the old lanes (and the plain queue) still drain", async () => {
    const plain = new Queue("ln7", ctx().conn);
    await plain.add("plain");
    const three = new Queue("ln7", ctx().conn, { lanes: 3 });
    await three.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: `three${i}` })));
    const five = new Queue("ln7", ctx().conn, { lanes: 5 });
    await five.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: `five${i}` })));
    assert.equal(((await five.counts()) as LanedCounts).pending, 17);
    const done: string[] = [];
    const worker = new Worker(five, (job: Job) => void done.push(job.text()), {
      concurrency: 3,
      idleCheckMs: 100,
    });
    await until("17 done", () => done.length === 17, 20_000);
    await worker.close();
    assert.ok(done.includes("plain") && done.includes("three0") && done.includes("five0"));
    assert.equal(((await five.counts()) as LanedCounts).pending, 0);
  });

  test("a worker started before a new lane count was recorded joins its lanes", async () => {
    const done: string[] = [];
    const worker = new Worker(
      new Queue("ln8", ctx().conn, { lanes: 2 }),
      (job: Job) => void done.push(job.text()),
      {
        concurrency: 2,
        idleCheckMs: 100,
        reapEveryMs: 200,
      },
    );
    await worker.ready;
    await new Queue("ln8", ctx().conn, { lanes: 6 }).addBulk(
      Array.from({ length: 6 }, (_, i) => ({ payload: `six${i}` })),
    );
    await until("6 done", () => done.length === 6, 20_000);
    await worker.close();
  });

  test("bad lane options are typed errors", () => {
    for (const lanes of [0, 257, 2.5]) {
      assert.throws(
        () => new Queue("ln9", ctx().conn, { lanes }),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === "lanes",
      );
    }
    const q = new Queue("ln9", ctx().conn, { lanes: 2 });
    return assert.rejects(
      q.add("x", { laneKey: 7 as never }),
      (e: unknown) => e instanceof InvalidArgumentError && e.argument === "laneKey",
    );
  });
});

/**
 * The dashboard's sampling among many queues, on both wires: beyond `sampleAll` queues a sample
 * reads the queues a page has on screen and a bounded round-robin of the others' counts, so its
 * commands do not grow with the queues the server holds (measured with `INFO commandstats`,
 * compared with what reading every queue's counts costs), and every queue's counts come round
 * again without a discovery.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Sampler } from "../src/dashboard/sampler.js";
import { Queue } from "../src/index.js";
import { forEachWire } from "./support/wires.js";

/** Every command the server ran (`INFO commandstats`), the `INFO` calls themselves left out. */
async function commands(cli: (...args: string[]) => Promise<unknown>): Promise<number> {
  const text = String(await cli("INFO", "commandstats"));
  let calls = 0;
  for (const m of text.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm))
    if (m[1] !== "info") calls += Number(m[2]);
  return calls;
}

forEachWire("dashboard sampling at scale", (ctx) => {
  test("among 300 queues then 600 a sample costs the same, under reading every count; each queue recounted in turn", async () => {
    const { conn, server } = ctx();
    const cli = (...a: string[]) => server.cli(...a);
    const names = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => `many-${String(from + i).padStart(3, "0")}`);
    const fill = (list: string[]) =>
      Promise.all(
        list.map((n, i) =>
          new Queue(n, conn).addBulk(Array.from({ length: 1 + (i % 3) }, () => ({ payload: "x" }))),
        ),
      );
    const first = names(0, 300);
    await fill(first);
    const sampler = new Sampler(conn, { sampleMs: 1000, discoverMs: 3_600_000, keep: 60, sampleAll: 100 });
    const cost = async () => {
      const before = await commands(cli);
      await sampler.sample();
      return (await commands(cli)) - before;
    };
    try {
      await sampler.sample(); // the first: it waits for the discovery
      assert.equal((await sampler.snapshot()).queues.length, 300);
      // What reading every queue's counts once costs the server (the same reads as `readCounts`).
      const before = await commands(cli);
      await Promise.all(first.map((n) => new Queue(n, conn).counts()));
      const everyCount = (await commands(cli)) - before;
      // Counts change after the discovery: only the round-robin brings them to the page.
      await Promise.all(first.map((n) => new Queue(n, conn).add("more")));
      const costs300: number[] = [];
      const snap = async () => {
        const s = await sampler.snapshot();
        return s.queues.filter((q) => first.includes(q.name));
      };
      const want = first.map((_, i) => 2 + (i % 3));
      const pending = async () => (await snap()).map((q) => q.counts.pending);
      for (let i = 0; i < 30 && JSON.stringify(await pending()) !== JSON.stringify(want); i++) {
        costs300.push(await cost());
      }
      assert.deepEqual(
        (await snap()).map((q) => q.counts.pending),
        want,
        "every queue recounted, without a discovery",
      );
      assert.ok(costs300.length > 1, `recounted over several samples (${costs300.length}), not in one`);
      const max300 = Math.max(...costs300);
      assert.ok(max300 > 0, "a sample reads some counts");
      assert.ok(
        max300 * 2 <= everyCount,
        `a sample (${max300} commands) costs well under every count (${everyCount})`,
      );
      // Twice the queues: a sample costs no more.
      await fill(names(300, 300));
      await sampler.rediscover();
      assert.equal((await sampler.snapshot()).queues.length, 300, "the listing swapped, not yet sampled");
      const costs600: number[] = [];
      for (let i = 0; i < 5; i++) costs600.push(await cost());
      assert.equal((await sampler.snapshot()).queues.length, 600);
      assert.ok(
        Math.max(...costs600) <= max300,
        `600 queues: ${costs600.join(", ")}; 300: at most ${max300}`,
      );
      const offScreen = (await sampler.snapshot()).queues.filter((q) => !q.sampled);
      assert.equal(offScreen.length, 600, "none on screen: none followed live");
    } finally {
      await sampler.stop();
    }
  });

  test("the queues on screen are sampled each time, beside the round-robin", async () => {
    const { conn, server } = ctx();
    const cli = (...a: string[]) => server.cli(...a);
    const names = Array.from({ length: 150 }, (_, i) => `shown-${String(i).padStart(3, "0")}`);
    await Promise.all(
      names.map((n, i) =>
        new Queue(n, conn).addBulk(Array.from({ length: 1 + (i % 4) }, () => ({ payload: "x" }))),
      ),
    );
    const sampler = new Sampler(conn, { sampleMs: 1000, discoverMs: 3_600_000, keep: 60, sampleAll: 100 });
    const cost = async () => {
      const before = await commands(cli);
      await sampler.sample();
      return (await commands(cli)) - before;
    };
    try {
      await sampler.sample();
      const idle = await cost(); // nothing on screen: the round-robin only
      const shown = names.slice(100, 110);
      sampler.watch(shown);
      await cost(); // their bus positions taken
      const ten = await cost();
      sampler.watch(shown.slice(0, 1));
      const snap = await sampler.snapshot();
      assert.deepEqual(
        snap.queues.filter((q) => q.sampled).map((q) => q.name),
        shown,
        "the shown queues, and only them, followed live",
      );
      for (const n of shown) {
        const q = snap.queues.find((s) => s.name === n)!;
        assert.equal(q.counts.pending, (await new Queue(n, conn).counts()).pending, n);
      }
      assert.ok(ten > idle, `ten shown (${ten} commands) cost more than none (${idle})`);
    } finally {
      await sampler.stop();
    }
  });
});

/**
 * The dashboard's sampling among many queues, on both wires: beyond `sampleAll` queues a sample
 * reads the queues a page has on screen and a bounded round-robin of the others' counts, so its
 * commands do not grow with the queues the server holds (measured with `INFO commandstats`,
 * compared with what reading every queue's counts costs), and every queue's counts come round
 * again without a discovery — on one node and on a 3-primary cluster (summed over the primaries).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Connection } from "../src/connector/connection.js";
import { readCounts } from "../src/dashboard/counts.js";
import { Sampler } from "../src/dashboard/sampler.js";
import { Queue } from "../src/index.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { forEachWire } from "./support/wires.js";

/** Every command the server ran (`INFO commandstats`), the `INFO` calls themselves left out. */
async function commandsOf(cli: (...args: string[]) => Promise<unknown>): Promise<number> {
  const text = String(await cli("INFO", "commandstats"));
  let calls = 0;
  for (const m of text.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm))
    if (m[1] !== "info") calls += Number(m[2]);
  return calls;
}

/**
 * `n` queues, then `2n`: a sample's commands (summed over the servers by `commands`) stay under
 * what reading every queue's counts once costs, every queue's counts come round again without a
 * discovery, and twice the queues cost a sample no more.
 */
async function boundedAt(conn: Connection, commands: () => Promise<number>, prefix: string, n: number) {
  const names = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(4, "0")}`);
  const fill = (list: string[]) =>
    Promise.all(
      list.map((q, i) =>
        new Queue(q, conn).addBulk(Array.from({ length: 1 + (i % 3) }, () => ({ payload: "x" }))),
      ),
    );
  const first = names(0, n);
  await fill(first);
  const sampler = new Sampler(conn, { sampleMs: 1000, discoverMs: 3_600_000, keep: 60, sampleAll: 100 });
  const cost = async () => {
    const before = await commands();
    await sampler.sample();
    return (await commands()) - before;
  };
  const mine = async () => (await sampler.snapshot()).queues.filter((q) => q.name.startsWith(prefix));
  try {
    await sampler.sample(); // the first: it waits for the discovery
    assert.equal((await mine()).length, n);
    // What reading every queue's counts once costs the servers (the reads a sample makes of one).
    const before = await commands();
    await Promise.all(first.map((q) => readCounts(conn, [q])));
    const everyCount = (await commands()) - before;
    // Counts change after the discovery: only the round-robin brings them to the page.
    await Promise.all(first.map((q) => new Queue(q, conn).add("more")));
    const want = first.map((_, i) => 2 + (i % 3));
    const pending = async () => (await mine()).map((q) => q.counts.pending);
    const costs: number[] = [];
    for (let i = 0; i < 2 * n && JSON.stringify(await pending()) !== JSON.stringify(want); i++) {
      costs.push(await cost());
    }
    assert.deepEqual(await pending(), want, "every queue recounted, without a discovery");
    assert.ok(costs.length > 1, `recounted over several samples (${costs.length}), not in one`);
    const max = Math.max(...costs);
    assert.ok(max > 0, "a sample reads some counts");
    assert.ok(
      max * 2 <= everyCount,
      `a sample (${max} commands) costs well under every count (${everyCount})`,
    );
    // Twice the queues: a sample costs no more.
    await fill(names(n, n));
    await sampler.rediscover();
    assert.equal((await mine()).length, n, "the listing swapped, not yet sampled");
    const twice: number[] = [];
    for (let i = 0; i < 5; i++) twice.push(await cost());
    assert.equal((await mine()).length, 2 * n);
    assert.ok(Math.max(...twice) <= max, `${2 * n} queues: ${twice.join(", ")}; ${n}: at most ${max}`);
    assert.ok(
      (await mine()).every((q) => !q.sampled),
      "none on screen: none followed live",
    );
  } finally {
    await sampler.stop();
  }
}

forEachWire("dashboard sampling at scale", (ctx) => {
  test("among 300 queues then 600 a sample costs the same, under reading every count; each queue recounted in turn", async () => {
    const { conn, server } = ctx();
    await boundedAt(conn, () => commandsOf((...a) => server.cli(...a)), "many-", 300);
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
      const before = await commandsOf(cli);
      await sampler.sample();
      return (await commandsOf(cli)) - before;
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

forEachClusterWire("dashboard sampling at scale, on a cluster", (ctx) => {
  test("among 150 queues over three shards then 300, summed over the primaries: the same bound", async () => {
    const { conn, cluster } = ctx();
    const sum = async () => {
      let calls = 0;
      for (const p of cluster.primaries()) calls += await commandsOf((...a) => p.cli(...a));
      return calls;
    };
    await boundedAt(conn, sum, "shard-", 150);
  });
});

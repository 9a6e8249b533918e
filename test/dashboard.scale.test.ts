/**
 * The dashboard's sampling among many queues, on both wires: beyond `sampleAll` queues only those
 * a page has on screen are sampled each time, so a sample's commands grow with the queues shown,
 * not with the queues the server holds — the bound computed here from what one shown queue costs.
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
  test("among 300 queues a sample reads the shown ones only; every queue's counts at discovery", async () => {
    const { conn, server } = ctx();
    const names = Array.from({ length: 300 }, (_, i) => `many-${String(i).padStart(3, "0")}`);
    await Promise.all(
      names.map((n, i) =>
        new Queue(n, conn).addBulk(Array.from({ length: 1 + (i % 3) }, () => ({ payload: "x" }))),
      ),
    );
    const sampler = new Sampler(conn, { sampleMs: 1000, discoverMs: 3_600_000, keep: 60, sampleAll: 100 });
    const cost = async (watch: string[]) => {
      sampler.watch(watch);
      const before = await commands((...a) => server.cli(...a));
      await sampler.sample();
      return (await commands((...a) => server.cli(...a))) - before;
    };
    await sampler.sample(); // the discovery: every queue's counts, none followed
    const first = await sampler.snapshot();
    assert.equal(first.queues.length, 300);
    assert.deepEqual(
      first.queues.map((q) => q.counts.pending),
      names.map((_, i) => 1 + (i % 3)),
      "every queue counted at the discovery",
    );
    await cost([names[7]!]); // its bus position taken
    const one = await cost([names[7]!]);
    const shown = names.slice(100, 110);
    await cost(shown);
    const ten = await cost(shown);
    assert.ok(one > 0, "one shown queue costs some commands");
    const watched = shown.length + 1; // the first one is still watched
    assert.ok(ten <= watched * one, `${watched} watched: ${ten} commands, at most ${watched} × ${one}`);
    const snap = await sampler.snapshot();
    const sampled = snap.queues.filter((q) => q.sampled).map((q) => q.name);
    assert.deepEqual(sampled, [names[7], ...shown], "the shown queues only (the first still watched)");
    assert.equal(snap.queues.find((q) => q.name === names[105])!.counts.pending, 1 + (105 % 3));
    await sampler.stop();
  });
});

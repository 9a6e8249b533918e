/**
 * The differential harness on a local cluster of three module primaries (`npm run harness --
 * --cluster`), short form: every listed case but the single-node ones, generated steps, the
 * durability checks on every node; a fault is still caught there (a wrong wake, a reply the
 * server's routing contradicts); and the pure parts: names placed in a slot, the cases kept
 * single-node.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { slot } from "../src/keyspace.js";
import type { Fault } from "../harness/executors.js";
import { nameInSlot, nameSlot } from "../harness/placement.js";
import type { Reply } from "../harness/resp.js";
import { CROSSSLOT } from "../harness/routing.js";
import { ALL_CASES, runHarness } from "../harness/run.js";
import { clusterSkip } from "../harness/stage.js";

const SEED = Number(process.env.HARNESS_SEED ?? 20261129);

describe("the harness on a cluster, short run", () => {
  test("every listed case that runs on a cluster, at least 300 generated steps, the durability checks on the three primaries: zero failures", async () => {
    const result = await runHarness({ steps: 300, seed: SEED, cluster: true });
    assert.equal(result.ok, true, result.report);
    const skipped = ALL_CASES.filter((c) => clusterSkip(c) !== null).length;
    assert.equal(result.tally.listedCases, ALL_CASES.length - skipped);
    assert.ok(result.tally.generatedSteps >= 300);
    assert.match(result.report, /durability: no EMQ\.\* in the AOF \| 3 \| 3 \| 0 \| 0/);
    assert.match(result.report, /durability: restart on the AOF \| 3 \| 3 \| 0 \| 0/);
    assert.match(result.report, /on a cluster of 3 module primaries/);
    const spread = /cases and sequences per primary: (.*)/.exec(result.report)?.[1] ?? "";
    assert.equal(spread.split(", ").length, 3, spread);
    for (const n of spread.split(", ").map((p) => Number(p.split(" ")[1]))) assert.ok(n > 100, spread);
    assert.ok(result.tally.routed.steps > 0, "some steps were refused by routing (CROSSSLOT, MOVED)");
    // RESCHEDULE has a script twin now: it is compared with it on the cluster, never held to a spec.
    const reschedule = result.tally.rows.get("RESCHEDULE");
    assert.ok(reschedule && reschedule.equal > 0 && reschedule.failed === 0, result.report);
    assert.equal(reschedule.by.D8, undefined);
  });

  test("a wake naming the wrong count is caught on a cluster node (SSUBSCRIBE there)", async () => {
    const channel = (side: { name(q: string): string }) => `emq:{${side.name("A")}}:wake`;
    const extra: Fault = { verb: "PROMOTE", writes: (side) => [["SPUBLISH", channel(side), "1"]] };
    const only = /^PROMOTE: three due ids, one wake naming 3$/;
    const result = await runHarness({
      steps: 0,
      seed: SEED,
      only,
      fault: extra,
      durability: false,
      cluster: true,
    });
    const failure = result.tally.failures.find((f) => f.verb === "PROMOTE");
    assert.ok(failure, result.report);
    assert.deepEqual(failure.problems, ['wake on queue A: script published ["3"], native ["3","1"]']);
  });

  test("a native reply the server's routing contradicts is caught (CROSSSLOT for keys of several slots)", async () => {
    const ok = (r: Reply): Reply => (r.t === "error" ? { t: "int", v: "1" } : r);
    const only = /^ENQUEUE layout: empty queue name/;
    const result = await runHarness({
      steps: 0,
      seed: SEED,
      only,
      fault: { verb: "ENQUEUE", reply: ok },
      durability: false,
      cluster: true,
    });
    const failure = result.tally.failures.find((f) => f.verb === "ENQUEUE");
    assert.ok(failure, result.report);
    assert.deepEqual(failure.problems, [
      `routing: the native side answered :1, the server's routing says -${CROSSSLOT}`,
    ]);
  });
});

describe("placement and the single-node cases", () => {
  test("a name placed in a slot hashes there, keys and all", () => {
    for (const target of [0, 1, 5460, 5461, 9051, 16383]) {
      for (const base of ["h0As", "h17Bn", "h123456An"]) {
        const name = nameInSlot(base, target);
        assert.match(name, new RegExp(`^${base}\\.[0-9a-zA-Z]{3}$`));
        assert.equal(nameSlot(name), target);
        assert.equal(slot(`emq:{${name}}:pending`), target);
        assert.equal(slot(`emq:{${name}}:job:JOB00000000001`), target);
      }
    }
    assert.throws(() => nameInSlot("q", 16384), RangeError);
  });

  test("the fence cases and the replica guards stay single-node; the rest run on the cluster", () => {
    const skipped = ALL_CASES.filter((c) => clusterSkip(c) !== null).map((c) => c.name);
    assert.ok(skipped.length > 0);
    for (const name of skipped) assert.match(name, / fence: | write guard: (read-only|writable) replica/);
    assert.ok(ALL_CASES.some((c) => / write guard: over maxmemory/.test(c.name) && clusterSkip(c) === null));
    assert.ok(ALL_CASES.some((c) => / layout: /.test(c.name) && clusterSkip(c) === null));
  });
});

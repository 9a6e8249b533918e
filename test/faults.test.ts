/**
 * The fault experiments of `npm run soak` (soak/experiments/), in their short forms: a server
 * SIGKILLed mid-load, connections cut every 300 ms, a node over maxmemory, random EMQ.* calls
 * against a module node, an ACL user limited to one queue, a worker process SIGKILLed (also one
 * holding two batches or 100 slots: `batch-kill`), the connection cut between a fused completion
 * and its reply (`fused-cuts`), and on a local cluster: those two again, slots resharded under load
 * (the legacy way; atomically too on Valkey 9), a primary SIGKILLed and failed over. Each runs on every wire it supports and must meet its targets (the
 * outcome's `failures` is empty); the figures go to the spec reporter as diagnostics. An
 * experiment that needs a newer server than the one under test is skipped, saying so.
 *
 * Two controls show the checks can fail: a fuzz run with one writing call labelled malformed,
 * and an ACL run whose user is granted queue b too, must both count breaches.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EXPERIMENTS, experimentNamed, type Outcome } from "../soak/experiments/index.js";
import { details, table } from "../soak/table.js";
import { valkeyMajor } from "../tools/embedded-valkey.js";

function report(t: { diagnostic(message: string): void }, o: Outcome): void {
  for (const line of `${table([o])}\n${details([o])}`.split("\n")) t.diagnostic(line);
}

for (const e of EXPERIMENTS) {
  describe(`fault experiment: ${e.name} — ${e.title}`, () => {
    const skip = valkeyMajor() < e.minValkey && `needs Valkey ${e.minValkey} (ECHOMQ_VALKEY_SERVER)`;
    for (const wire of e.wires) {
      test(`wire ${wire}`, { timeout: 120_000, skip }, async (t) => {
        const o = await e.run(wire, e.defaults.suite);
        report(t, o);
        assert.deepEqual(o.failures, [], `${e.name} [wire ${wire}] missed its targets:\n${details([o])}`);
      });
    }
  });
}

describe("fault experiments: the checks catch a breach", () => {
  test("module fuzz: a writing call labelled malformed counts as not refused and as keys written", async (t) => {
    const fuzz = experimentNamed("module-fuzz");
    const o = await fuzz.run(6, { ...fuzz.defaults.suite, calls: 2000, canary: 1 });
    report(t, o);
    // EMQ.PAUSE writes the flag, and its `paused` entry on the queue's event bus.
    assert.equal(o.breaches, 3, "one call not refused + two keys (emq:{f1}:meta, emq:{f1}:events) written");
    assert.ok(o.notes.some((n) => n.includes("emq:{f1}:meta")));
    assert.ok(o.notes.some((n) => n.includes("emq:{f1}:events")));
  });

  test("acl: a user also granted queue b breaches", async (t) => {
    const aclRun = experimentNamed("acl");
    const o = await aclRun.run(6, { ...aclRun.defaults.suite, jobs: 20, canary: 1 });
    report(t, o);
    assert.ok(o.breaches > 50, `breaches counted: ${o.breaches}`);
  });
});

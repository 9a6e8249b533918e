/**
 * Flows across the shards of a 3-primary local cluster, both wires (the short form of the soak
 * experiment `flows`): 100 parents × 10 children spread over one child queue per shard, the
 * process running the children's workers (and so their relays) SIGKILLed once mid-way and
 * started again: every parent runs exactly once, after all its children; zero lost.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { flowsDefaults, flowsOnCluster } from "../soak/experiments/flows.js";
import { forEachClusterWire } from "./support/cluster-wires.js";

forEachClusterWire("flows across shards", (ctx) => {
  test("100 parents × 10 children, the relay killed and restarted: each parent once, after its children, 0 lost", {
    timeout: 180_000,
  }, async () => {
    const { cluster, conn, wire } = ctx();
    const out = await flowsOnCluster(cluster, conn, wire, flowsDefaults.suite);
    assert.deepEqual(out.failures, [], out.notes.join("; "));
    assert.equal(out.lost, 0);
    assert.equal(out.stuck, 0);
    assert.equal(out.completedTwice, 0);
    assert.equal(out.breaches, 0);
  });
});

/**
 * Flows across the shards of a 3-primary local cluster, both wires (the short form of the soak
 * experiment `flows`): 100 parents × 10 children spread over one child queue per shard, the
 * process running the children's workers (and so their relays) SIGKILLed once mid-way and
 * started again: every parent runs exactly once, after all its children; zero lost. And a
 * flow's shape on a cluster: a repeated id or a cycle refused before any shard is written, a
 * chain 1,000 deep over three shards run leaf first, root last.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { FlowProducer, type FlowJob } from "../src/index.js";
import { InvalidFlowError } from "../src/errors.js";
import { newId } from "../src/protocol.js";
import { flowsDefaults, flowsOnCluster } from "../soak/experiments/flows.js";
import { chain, chainIds, runChain } from "./support/chains.js";
import { queuePerShard } from "./support/cluster-helpers.js";
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

  test("a repeated id or a cycle is refused before any shard is written; a 1,000-deep chain over three shards runs leaf first", {
    timeout: 120_000,
  }, async () => {
    const { cluster, conn } = ctx();
    const [a, b, c] = queuePerShard(cluster, "shape") as [string, string, string];
    const keys = async () => {
      let n = 0;
      for (const node of cluster.primaries()) n += Number(await node.cli("DBSIZE"));
      return n;
    };
    const before = await keys();
    const flows = new FlowProducer(conn);
    const id = newId();
    const repeated: FlowJob = {
      queue: a,
      payload: "p",
      opts: { id },
      children: [
        { queue: b, payload: "x" },
        { queue: a, payload: "y", opts: { id } },
      ],
    };
    await assert.rejects(
      flows.add(repeated),
      (err: unknown) =>
        err instanceof InvalidFlowError &&
        /^invalid flow\.children\[1\]: job id .* is flow's id too/.test(err.message),
    );
    const cyclic: FlowJob = { queue: a, payload: "p", children: [{ queue: c, payload: "c" }] };
    cyclic.children![0]!.children = [cyclic];
    await assert.rejects(
      flows.add(cyclic),
      /^InvalidFlowError: invalid flow\.children\[0\]\.children\[0\]: is flow again \(a cycle\)/,
    );
    assert.equal(await keys(), before);
    const depth = 1_000;
    const queueAt = (level: number) => [a, b, c][level % 3]!;
    const ids = chainIds(await flows.add(chain(depth, queueAt)));
    assert.deepEqual(await runChain(conn, queueAt, depth), [...ids].reverse());
  });
});

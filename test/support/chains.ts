/**
 * Flow chains for the tests: `chain` builds one (iteratively: a chain may be deeper than the
 * stack), `chainIds` reads the ids of the node `FlowProducer.add` answered, `runChain` runs one
 * to its end by hand.
 */
import assert from "node:assert/strict";
import { complete, claim } from "../../src/protocol.js";
import type { Connection, FlowJob, FlowNode } from "../../src/index.js";
import { Relay } from "../../src/flows/relay.js";

/** A chain `depth` jobs deep: the root at `ids[0]`, its child at `ids[1]`, …, the leaf last. */
export function chain(depth: number, queueAt: (level: number) => string, ids?: string[]): FlowJob {
  let job: FlowJob | undefined;
  for (let level = depth - 1; level >= 0; level--) {
    const opts = ids ? { id: ids[level]! } : {};
    job = { queue: queueAt(level), payload: String(level), opts, ...(job ? { children: [job] } : {}) };
  }
  return job!;
}

/** The ids of a chain's nodes, root first (a walk without recursion). */
export function chainIds(node: FlowNode): string[] {
  const ids: string[] = [];
  for (let at: FlowNode | undefined = node; at; at = at.children[0]) ids.push(at.id);
  return ids;
}

/**
 * Runs a chain to its end by hand, one job at a time (claim, complete, relay): only the deepest
 * job not yet run can be claimed; → the ids in the order they ran.
 */
export async function runChain(conn: Connection, queueAt: (level: number) => string, depth: number) {
  const ran: string[] = [];
  const relay = (q: string) =>
    new Relay(conn, q, { batch: 10, everyMs: 60_000, pokeMs: 5 }, { error: (e) => assert.fail(String(e)) });
  for (let level = depth - 1; level >= 0; level--) {
    const q = queueAt(level);
    const job = await claim(conn, q, 60_000);
    assert.ok(job, `level ${level} is pending once its child completed`);
    await complete(conn, q, job.id, job.attempts, `r${level}`, 10);
    ran.push(job.id);
    if (level > 0) assert.deepEqual(await relay(q).round(), { relayed: 1, more: false });
  }
  return ran;
}

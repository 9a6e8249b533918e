/**
 * A flow's shape on both wires: a repeated id (a parent's id on its child, two siblings with one
 * id) and a node object used twice (a cycle, a child shared by two parents) are refused before
 * anything is written, with `InvalidFlowError` naming the jobs; so is a flow over
 * `MAX_FLOW_JOBS`. A 20,000-deep chain is accepted (every row checked on the server), and a
 * 2,000-deep one runs leaf first, root last.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_FLOW_JOBS, newId } from "../src/protocol.js";
import { FlowProducer, type FlowJob, InvalidArgumentError, Queue } from "../src/index.js";
import { InvalidFlowError } from "../src/errors.js";
import { chain, chainIds, runChain } from "./support/chains.js";
import { forEachWire } from "./support/wires.js";

/** Whether `err` is an `InvalidFlowError` whose message matches `text`. */
const flowError = (text: RegExp) => (err: unknown) => {
  assert.ok(err instanceof InvalidFlowError, `an InvalidFlowError, got ${String(err)}`);
  assert.equal(err.code, "EMQ_INVALID_FLOW");
  assert.match(err.message, text);
  return true;
};

forEachWire("flow shapes", (ctx) => {
  const keys = async () => Number(await ctx().server.cli("DBSIZE"));

  test("a parent whose child has its id (same queue) is refused; nothing is written", async () => {
    const before = await keys();
    const id = newId();
    await assert.rejects(
      new FlowProducer(ctx().conn).add({
        queue: "dup",
        payload: "p",
        opts: { id },
        children: [
          { queue: "other", payload: "a", opts: { id } },
          { queue: "dup", payload: "b", opts: { id } },
        ],
      }),
      flowError(
        new RegExp(`^invalid flow\\.children\\[1\\]: job id ${id} in queue "dup" is flow's id too: `),
      ),
    );
    assert.equal(await keys(), before);
  });

  test("two siblings with one id are refused, deep in the flow too; nothing is written", async () => {
    const before = await keys();
    const id = newId();
    const flow: FlowJob = {
      queue: "top",
      payload: "p",
      children: [
        { queue: "kids", payload: "x" },
        {
          queue: "mid",
          payload: "m",
          children: [
            { queue: "kids", payload: "a", opts: { id } },
            { queue: "kids", payload: "b", opts: { id } },
          ],
        },
      ],
    };
    await assert.rejects(
      new FlowProducer(ctx().conn).add(flow),
      flowError(
        /^invalid flow\.children\[1\]\.children\[1\]: job id .* is flow\.children\[1\]\.children\[0\]'s id too: every job of a flow needs its own id/,
      ),
    );
    assert.equal(await keys(), before);
  });

  test("one id in two queues is two jobs: accepted, and the parent runs after its child", async () => {
    const id = newId();
    const node = await new FlowProducer(ctx().conn).add({
      queue: "same-p",
      payload: "p",
      opts: { id },
      children: [{ queue: "same-c", payload: "c", opts: { id } }],
    });
    assert.deepEqual([node.id, node.children[0]!.id], [id, id]);
    const ran = await runChain(ctx().conn, (level) => (level === 0 ? "same-p" : "same-c"), 2);
    assert.deepEqual(ran, [id, id]);
    assert.deepEqual(await new Queue("same-p", ctx().conn).getChildrenValues(id), { [`same-c:${id}`]: "r1" });
  });

  test("a cycle of node objects is an InvalidFlowError, not a stack overflow; nothing is written", async () => {
    const before = await keys();
    const inner: FlowJob = { queue: "c", payload: "inner", children: [] };
    const outer: FlowJob = { queue: "c", payload: "outer", children: [inner] };
    inner.children!.push({ queue: "c", payload: "leaf" }, outer);
    await assert.rejects(
      new FlowProducer(ctx().conn).add(outer),
      flowError(/^invalid flow\.children\[0\]\.children\[1\]: is flow again \(a cycle\)/),
    );
    // A child object shared by two parents is a repeat too (it would be one job with two parents).
    const shared: FlowJob = { queue: "c", payload: "shared" };
    await assert.rejects(
      new FlowProducer(ctx().conn).add({
        queue: "c",
        payload: "root",
        children: [
          { queue: "c", payload: "a", children: [shared] },
          { queue: "c", payload: "b", children: [shared] },
        ],
      }),
      flowError(
        /^invalid flow\.children\[1\]\.children\[0\]: is the object of flow\.children\[0\]\.children\[0\] again/,
      ),
    );
    assert.equal(await keys(), before);
  });

  test("a 20,000-deep chain is accepted: every job written, each waiting for its one child", async () => {
    const { conn } = ctx();
    const depth = 20_000;
    const node = await new FlowProducer(conn).add(chain(depth, () => "deep"));
    const ids = chainIds(node);
    assert.equal(ids.length, depth);
    assert.equal(new Set(ids).size, depth);
    const queue = new Queue("deep", conn);
    assert.deepEqual(await queue.counts(), {
      pending: 1,
      scheduled: 0,
      active: 0,
      completed: 0,
      dead: 0,
      waiting: depth - 1,
      paused: false,
    });
    // Every row on the server: the leaf pending, each other job waiting for one child, and each
    // job's parent the one above it.
    const rows = await Promise.all(ids.map((id) => queue.getJob(id)));
    const wrong = rows.filter((row, level) => {
      const leaf = level === depth - 1;
      const parent = level === 0 ? undefined : { queue: "deep", id: ids[level - 1] };
      return (
        row?.state !== (leaf ? "pending" : "waiting") ||
        row.childrenLeft !== (leaf ? undefined : 1) ||
        JSON.stringify(row.parent) !== JSON.stringify(parent)
      );
    });
    assert.deepEqual(wrong, []);
  });

  test("a 2,000-deep chain over two queues runs leaf first, root last", { timeout: 120_000 }, async () => {
    const { conn } = ctx();
    const depth = 2_000;
    const queueAt = (level: number) => (level % 2 === 0 ? "even" : "odd");
    const ids = chainIds(await new FlowProducer(conn).add(chain(depth, queueAt)));
    assert.deepEqual(await runChain(conn, queueAt, depth), [...ids].reverse());
    for (const q of ["even", "odd"]) {
      const counts = await new Queue(q, conn).counts();
      assert.deepEqual([counts.pending, counts.waiting, counts.active, counts.dead], [0, 0, 0, 0], q);
    }
  });

  test("a flow over MAX_FLOW_JOBS is refused naming the bound, deep or wide; nothing is written", async () => {
    const before = await keys();
    const flows = new FlowProducer(ctx().conn);
    const bound = new RegExp(`^invalid flow: holds more than ${MAX_FLOW_JOBS} jobs \\(every level\\)`);
    await assert.rejects(flows.add(chain(MAX_FLOW_JOBS + 1, () => "over")), flowError(bound));
    const leaves = Array.from({ length: MAX_FLOW_JOBS }, (_, i) => ({ queue: "over", payload: String(i) }));
    await assert.rejects(flows.add({ queue: "over", payload: "root", children: leaves }), flowError(bound));
    assert.equal(await keys(), before);
    // At the bound exactly, the flow is checked to its last job: a bad payload there is refused,
    // its path named in a few levels (the first ones and the last), not 100,000.
    const full = chain(MAX_FLOW_JOBS, () => "over");
    let leaf = full;
    while (leaf.children) leaf = leaf.children[0]!;
    leaf.payload = 5 as unknown as string;
    await assert.rejects(flows.add(full), (err: unknown) => {
      assert.ok(err instanceof InvalidArgumentError);
      assert.match(
        err.message,
        /^invalid flow\.children\[0\]\.children\[0\]\..*\.children\[0\]\.payload: must be /,
      );
      assert.ok(err.message.length < 300, err.message);
      return true;
    });
    assert.equal(await keys(), before);
  });
});

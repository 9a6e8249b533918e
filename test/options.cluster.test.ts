/**
 * On a 3-primary cluster, both wires: an add whose options are not options is refused before
 * anything is sent — no node holds a new key.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgumentError, Queue } from "../src/index.js";
import { forEachClusterWire } from "./support/cluster-wires.js";

forEachClusterWire("options refused on a cluster", (ctx) => {
  test("add / addBulk with a foreign or misspelled key write nothing on any node", async () => {
    const { conn, cluster } = ctx();
    const keys = async () => {
      const sizes = await Promise.all(cluster.primaries().map((node) => node.cli("DBSIZE")));
      return sizes.reduce((sum: number, n) => sum + Number(n), 0);
    };
    const before = await keys();
    const queue = new Queue("opts-cluster", conn);
    await assert.rejects(queue.add("x", { attempts: 3 } as never), (e: unknown) => {
      return (
        e instanceof InvalidArgumentError && e.argument === "attempts" && /use maxAttempts/.test(e.message)
      );
    });
    await assert.rejects(queue.add("x", "str" as never), (e: unknown) => {
      return e instanceof InvalidArgumentError && e.argument === "options";
    });
    await assert.rejects(
      queue.addBulk([{ payload: "a" }, { payload: "b", opts: { dealy: 5 } as never }]),
      (e: unknown) =>
        e instanceof InvalidArgumentError &&
        e.argument === "jobs[1].dealy" &&
        /did you mean delay\?/.test(e.message),
    );
    assert.equal(await keys(), before, "no key written on any primary");
  });
});

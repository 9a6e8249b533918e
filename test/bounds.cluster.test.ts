/**
 * The size bounds on a local 3-primary cluster, both wires: on queues served by different shards,
 * a progress value, a log line and a payload over its bound are refused with `TooLargeError` —
 * on the host, and by the server for a raw call — and nothing is written; at the bound they are
 * kept.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Queue, TooLargeError } from "../src/index.js";
import { PROTOCOL, queueKey, scriptFor, slot, progress, claim, log } from "../src/protocol.js";
import { forEachClusterWire } from "./support/cluster-wires.js";

const bound = (grammar: "payload" | "progress" | "line"): number => {
  const max = PROTOCOL.grammars[grammar].max_bytes;
  assert.ok(max !== undefined && max > 0, `${grammar} has a bound`);
  return max;
};

forEachClusterWire("size bounds on a cluster", (ctx) => {
  test("over the bound refused (host and server, typed), nothing written; at the bound kept", async () => {
    const { conn } = ctx();
    const names = ["cb-a", "cb-b", "cb-c", "cb-d", "cb-e", "cb-f"];
    const shards = new Set(names.map((n) => Math.floor(slot(`emq:{${n}}:pending`) / 5462)));
    assert.ok(shards.size >= 2, "the queues spread over shards");
    for (const name of names) {
      const q = new Queue(name, conn);
      const { id } = await q.add("p");
      assert.equal((await claim(conn, name, 30_000))?.id, id);
      await assert.rejects(progress(conn, name, id, 1, Buffer.alloc(bound("progress") + 1)), TooLargeError);
      await assert.rejects(log(conn, name, id, 1, "l".repeat(bound("line") + 1)), TooLargeError);
      await assert.rejects(q.add(Buffer.alloc(bound("payload") + 1)), TooLargeError);
      const keys = [queueKey(name, "active"), queueKey(name, "")];
      await assert.rejects(
        conn.eval(scriptFor("PROGRESS"), keys, [id, "1", "v".repeat(bound("progress") + 1)]),
        (e: unknown) =>
          e instanceof TooLargeError &&
          e.reply === `ERR EMQ.PROGRESS progress must be at most ${bound("progress")} bytes`,
      );
      await assert.rejects(
        conn.eval(scriptFor("LOG"), keys, [id, "1", "l".repeat(bound("line") + 1)]),
        (e: unknown) =>
          e instanceof TooLargeError && e.reply === `ERR EMQ.LOG line must be at most ${bound("line")} bytes`,
      );
      const untouched = await q.getJob(id);
      assert.equal(untouched?.progress, undefined, `${name}: no progress written`);
      assert.deepEqual(untouched?.logs, [], `${name}: no line written`);
      assert.equal(((await q.counts()) as { pending: number }).pending, 0, `${name}: no job added`);

      await progress(conn, name, id, 1, Buffer.alloc(bound("progress"), 0x70));
      assert.equal(await log(conn, name, id, 1, "l".repeat(bound("line"))), 1);
      const kept = await q.getJob(id);
      assert.equal(kept?.progress?.length, bound("progress"));
      assert.equal(kept?.logs[0]?.length, bound("line"));
    }
  });
});

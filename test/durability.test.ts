/**
 * `durability` on one node, both wires: an add acknowledged only once `WAIT` / `WAITAOF` says it
 * is as safe as asked; otherwise `DurabilityError` with the ids (the jobs exist). Options are
 * checked before anything is sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DurabilityError, InvalidArgumentError, Queue, ServerError } from "../src/index.js";
import { jobKey, add, addBulk, enqueue } from "../src/protocol.js";
import { monitor } from "./support/monitor.js";
import { startValkey } from "./support/valkey.js";
import { forEachWire } from "./support/wires.js";

forEachWire("durability", (ctx) => {
  test("no replica: WAIT 0 passes, WAIT 1 is a DurabilityError carrying the id, and the job exists", async () => {
    const { conn, server } = ctx();
    const mon = await monitor(server.port);
    const ok = await add(conn, "d1", "a", { durability: { replicas: 0, timeoutMs: 20 } });
    const err = await enqueue(conn, "d1", "b", { durability: { replicas: 1, timeoutMs: 30 } }).then(
      () => assert.fail("acknowledged"),
      (e: unknown) => e,
    );
    await sleep(20);
    await mon.stop();
    assert.ok(err instanceof DurabilityError, String(err));
    assert.equal(err.code, "EMQ_DURABILITY");
    assert.match(err.message, /^durability not reached for job JOB\w{11}: WAIT 1 30: 0 of 1 replicas/);
    assert.equal(String(await server.cli("HGET", jobKey("d1", err.ids[0]!), "state")), "pending");
    assert.equal(String(await server.cli("HGET", jobKey("d1", ok.id), "state")), "pending");
    const waits = mon.commands().filter((c) => c[0]?.toUpperCase() === "WAIT");
    assert.deepEqual(waits, [
      ["wait", "0", "20"],
      ["wait", "1", "30"],
    ]);
  });

  test("a replica attached: WAIT 1 passes for add, addBulk and a Queue's default", async () => {
    const { conn, server } = ctx();
    const replica = await startValkey({ replicaOf: { host: server.host, port: server.port } });
    try {
      const d = { replicas: 1, timeoutMs: 2000 };
      const { id } = await add(conn, "d2", "a", { durability: d });
      assert.equal(String(await replica.cli("HGET", jobKey("d2", id), "state")), "pending", "on the replica");
      const bulk = await addBulk(conn, "d2", [{ payload: "b" }, { payload: "c" }], { durability: d });
      assert.equal(bulk.length, 2);
      const q = new Queue("d2", conn, { durability: d });
      await q.add("d");
      await q.addBulk([{ payload: "e" }]);
      assert.equal(Number(await replica.cli("ZCARD", "emq:{d2}:pending")), 5);
    } finally {
      await replica.stop();
    }
  });

  test("WAITAOF: refused without appendonly (DurabilityError, the server's refusal as cause); passes once the AOF is on", async () => {
    const { conn, server } = ctx();
    const aof = { aof: { local: true, replicas: 0 }, timeoutMs: 1000 };
    const err = await add(conn, "d3", "a", { durability: aof }).then(
      () => assert.fail("acknowledged"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof DurabilityError && err.cause instanceof ServerError, String(err));
    await server.cli("CONFIG", "SET", "appendonly", "yes");
    try {
      for (let i = 0; ; i++) {
        const info = String(await server.cli("INFO", "persistence"));
        if (/aof_rewrite_in_progress:0/.test(info) && /aof_enabled:1/.test(info)) break;
        assert.ok(i < 200, "AOF rewrite finished");
        await sleep(10);
      }
      await add(conn, "d3", "b", { durability: aof });
      const short = { aof: { local: true, replicas: 1 }, timeoutMs: 30 };
      const shortErr = await add(conn, "d3", "c", { durability: short }).then(
        () => assert.fail("acknowledged"),
        (e: unknown) => e,
      );
      assert.ok(shortErr instanceof DurabilityError, String(shortErr));
      assert.match(shortErr.message, /WAITAOF 1 1 30: local AOF fsynced, 0 of 1 replica AOFs fsynced/);
    } finally {
      await server.cli("CONFIG", "SET", "appendonly", "no");
    }
  });

  test("bad durability options are refused before anything is sent", async () => {
    const { conn } = ctx();
    const bad: [unknown, string][] = [
      [{ replicas: 1 }, "options.durability.timeoutMs"],
      [{ replicas: 1, timeoutMs: 0 }, "options.durability.timeoutMs"],
      [{ replicas: -1, timeoutMs: 10 }, "options.durability.replicas"],
      [{ replicas: 1, aof: { local: true, replicas: 0 }, timeoutMs: 10 }, "options.durability"],
      [{ timeoutMs: 10 }, "options.durability"],
      [{ aof: { local: "yes", replicas: 0 }, timeoutMs: 10 }, "options.durability.aof.local"],
      ["fast", "options.durability"],
    ];
    for (const [durability, argument] of bad) {
      await assert.rejects(
        add(conn, "d4", "a", { durability } as never),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === argument,
        argument,
      );
    }
    assert.throws(
      () => new Queue("d4", conn, { durability: { replicas: 1 } } as never),
      InvalidArgumentError,
    );
    assert.equal(Number(await ctx().server.cli("EXISTS", "emq:{d4}:pending")), 0, "nothing was added");
  });
});

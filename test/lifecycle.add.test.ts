/**
 * Adding jobs on both wires, checked against the raw keyspace: ADD with and without a delay, a
 * duplicate id, ENQUEUE for a plain add, and addBulk's batches, host refusals and NOSCRIPT
 * re-sends. The rest of the lifecycle: lifecycle.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgumentError, ServerError } from "../src/index.js";
import { InvalidIdError, InvalidQueueNameError } from "../src/errors.js";
import { add, addBulk, claim, jobKey, newId, queueKey, scriptFor } from "../src/protocol.js";
import { keysOf, lifecycle, TRACE_512 } from "./support/lifecycle.js";
import { monitor, names, untilSentinel } from "./support/monitor.js";
import { forEachWire } from "./support/wires.js";

forEachWire("job lifecycle: ADD and addBulk", (ctx) => {
  const { cli, dump, timed, within } = lifecycle(ctx);

  /* ------------------------------------------------------------------ ADD */

  test("ADD delay 0: the row holds state/attempts/payload (+ priority, max_attempts when set); pending score = priority", async () => {
    const { conn } = ctx();
    const plain = await add(conn, "a", "hello");
    assert.equal(plain.duplicate, false);
    assert.deepEqual(await dump("a"), {
      [jobKey("a", plain.id)]: { state: "pending", attempts: "0", payload: "hello" },
      "emq:{a}:pending": [plain.id, "0"],
    });
    const low = await add(conn, "a", "urgent", { priority: -5, maxAttempts: 4 });
    const high = await add(conn, "a", "later", { priority: 7 });
    const explicitZero = await add(conn, "a", "zero", { priority: 0, maxAttempts: 0, delay: 0 });
    assert.deepEqual(await dump("a"), {
      [jobKey("a", plain.id)]: { state: "pending", attempts: "0", payload: "hello" },
      [jobKey("a", low.id)]: {
        state: "pending",
        attempts: "0",
        payload: "urgent",
        priority: "-5",
        max_attempts: "4",
      },
      [jobKey("a", high.id)]: { state: "pending", attempts: "0", payload: "later", priority: "7" },
      [jobKey("a", explicitZero.id)]: { state: "pending", attempts: "0", payload: "zero" },
      "emq:{a}:pending": [low.id, "-5", plain.id, "0", explicitZero.id, "0", high.id, "7"],
    });
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push((await claim(conn, "a", 1000))!.id);
    assert.deepEqual(order, [low.id, plain.id, explicitZero.id, high.id]);
  });

  test("ADD delay > 0: a scheduled row; schedule score = server time + delay", async () => {
    const { conn } = ctx();
    const { value, lo, hi } = await timed(() => add(conn, "d", "later", { delay: 60_000, priority: 2 }));
    const snap = await dump("d");
    assert.deepEqual(snap[jobKey("d", value.id)], {
      state: "scheduled",
      attempts: "0",
      payload: "later",
      priority: "2",
    });
    const schedule = snap["emq:{d}:schedule"] as string[];
    assert.equal(schedule[0], value.id);
    within(schedule[1]!, lo + 60_000, hi + 60_000, "due time");
    assert.deepEqual(Object.keys(snap).sort(), [jobKey("d", value.id), "emq:{d}:schedule"]);
    assert.equal(await claim(conn, "d", 1000), null, "a scheduled job is not claimable");
  });

  test("ADD: a duplicate id (row of any type) answers 0 and writes nothing; edge values accepted", async () => {
    const { conn } = ctx();
    const id = newId();
    assert.deepEqual(await add(conn, "dup", "one", { id }), { id, duplicate: false });
    const before = await dump("dup");
    assert.deepEqual(await add(conn, "dup", "two", { id, delay: 5, priority: 3 }), { id, duplicate: true });
    assert.deepEqual(await dump("dup"), before);
    const other = newId();
    await cli("SET", jobKey("dup", other), "a string row");
    const snap = await dump("dup");
    assert.equal(
      await conn.eval(scriptFor("ADD"), keysOf.add("dup", other), [
        other,
        "x",
        "0",
        "0",
        "0",
        "",
        "",
        "",
        "0",
        "0",
        "",
        "",
        "",
      ]),
      0,
    );
    assert.deepEqual(await dump("dup"), snap);
    const edge = newId();
    const values = [
      edge,
      "",
      "-999999999999999",
      "0",
      "999999999999999",
      TRACE_512,
      "",
      "",
      "0",
      "0",
      "",
      "",
      "",
    ];
    assert.equal(await conn.eval(scriptFor("ADD"), keysOf.add("edge", edge), values), 1);
    assert.deepEqual(await dump("edge"), {
      [jobKey("edge", edge)]: {
        state: "pending",
        attempts: "0",
        payload: "",
        priority: "-999999999999999",
        max_attempts: "999999999999999",
        trace: TRACE_512,
      },
      "emq:{edge}:pending": [edge, "-999999999999999"],
    });
  });

  /* ------------------------------------------------------------------ addBulk */

  test("add with every option at its default goes out as ENQUEUE; with any option set, as ADD", async () => {
    const { conn, server, wire } = ctx();
    await add(conn, "warm", "loads the scripts", { priority: 1 });
    await add(conn, "warm", "loads the scripts");
    const mon = await monitor(server.port);
    await add(conn, "v", "plain");
    await add(conn, "v", "zeros", { priority: 0, delay: 0, maxAttempts: 0 });
    await add(conn, "v", "set", { maxAttempts: 2 });
    await addBulk(conn, "v", [{ payload: "b1" }, { payload: "b2", opts: { priority: 1 } }]);
    const entries = await untilSentinel(mon, conn);
    const verbOf = (c: string[]): string => {
      if (wire === 6) return c[0]!.toUpperCase();
      const sha = c[1];
      return sha === scriptFor("ENQUEUE").sha1 ? "ENQUEUE" : sha === scriptFor("ADD").sha1 ? "ADD" : c[0]!;
    };
    const seen = entries
      .filter((e) => e.client !== "lua")
      .map((e) => verbOf(e.args))
      .filter((v) => v.toUpperCase() !== "ECHO");
    const expected = ["ENQUEUE", "ENQUEUE", "ADD", "ENQUEUE", "ADD"];
    assert.deepEqual(seen, wire === 6 ? expected.map((v) => `EMQ.${v}`) : expected);
  });

  test("addBulk: one pipelined batch; rows as add writes them; own duplicate ids say so", async () => {
    const { conn } = ctx();
    const own = newId();
    await add(conn, "bulk", "first", { id: own });
    const results = await addBulk(conn, "bulk", [
      { payload: "a" },
      { payload: Buffer.from("bytes"), opts: { priority: -2, maxAttempts: 3 } },
      { payload: "again", opts: { id: own } },
      { payload: "later", opts: { delay: 60_000 } },
    ]);
    assert.equal(results.length, 4);
    assert.deepEqual(results[2], { id: own, duplicate: true });
    assert.ok(results.every((r, i) => i === 2 || !r.duplicate));
    const [a, b, , later] = results.map((r) => r.id);
    const snap = await dump("bulk");
    assert.deepEqual(snap[jobKey("bulk", a!)], { state: "pending", attempts: "0", payload: "a" });
    assert.deepEqual(snap[jobKey("bulk", b!)], {
      state: "pending",
      attempts: "0",
      payload: "bytes",
      priority: "-2",
      max_attempts: "3",
    });
    assert.deepEqual(snap[jobKey("bulk", own)], { state: "pending", attempts: "0", payload: "first" });
    assert.equal((snap[jobKey("bulk", later!)] as Record<string, string>).state, "scheduled");
    assert.deepEqual(snap["emq:{bulk}:pending"], [b, "-2", own, "0", a, "0"]);
    assert.deepEqual(await addBulk(conn, "bulk", []), []);
  });

  test("addBulk: one bad job refuses the whole batch on the host, naming it; nothing is sent", async () => {
    const { conn, server } = ctx();
    const mon = await monitor(server.port);
    const good = { payload: "ok" };
    const bad: [unknown, new (...a: never[]) => Error, RegExp][] = [
      [[good, { payload: "x", opts: { priority: 1.5 } }], InvalidArgumentError, /jobs\[1\]\.priority/],
      [[good, good, { payload: 5 }], InvalidArgumentError, /jobs\[2\]\.payload/],
      [[{ payload: "x", opts: { delay: -1 } }], InvalidArgumentError, /jobs\[0\]\.delay/],
      [[good, null], InvalidArgumentError, /jobs\[1\]/],
      [[good, { payload: "x", opts: "fast" }], InvalidArgumentError, /jobs\[1\]\.options/],
      [[good, { payload: "x", opts: { id: "JOB123" } }], InvalidIdError, /JOB123/],
      ["not an array", InvalidArgumentError, /jobs: must be an array, got string/],
    ];
    for (const [jobs, type, text] of bad) {
      await assert.rejects(addBulk(conn, "q", jobs as never), (e: unknown) => {
        assert.ok(e instanceof type, `${String(e)} is a ${type.name}`);
        assert.match((e as Error).message, text);
        return true;
      });
    }
    await assert.rejects(addBulk(conn, "a{b", [good]), InvalidQueueNameError);
    assert.deepEqual(names(await untilSentinel(mon, conn)), ["ECHO"]);
  });

  test("addBulk on wire 4 after SCRIPT FLUSH: the lines meeting NOSCRIPT are re-sent once loaded", async () => {
    const { conn, wire } = ctx();
    await cli("SCRIPT", "FLUSH");
    const results = await addBulk(conn, "nos", [
      { payload: "a" },
      { payload: "b", opts: { priority: 1 } },
      { payload: "c" },
    ]);
    assert.equal(results.filter((r) => !r.duplicate).length, 3);
    assert.equal(await cli("ZCARD", queueKey("nos", "pending")), 3);
    if (wire === 4)
      assert.deepEqual(
        await cli("SCRIPT", "EXISTS", scriptFor("ENQUEUE").sha1, scriptFor("ADD").sha1),
        [1, 1],
      );
  });

  test("addBulk: a server refusal of one job is thrown as its typed error; the others are added", async () => {
    const { conn } = ctx();
    await cli("SET", queueKey("wt", "schedule"), "not a zset");
    await assert.rejects(
      addBulk(conn, "wt", [{ payload: "now" }, { payload: "later", opts: { delay: 1000 } }]),
      (e: unknown) => e instanceof ServerError && /^WRONGTYPE/.test(e.reply),
    );
    assert.equal(await cli("ZCARD", queueKey("wt", "pending")), 1);
  });
});

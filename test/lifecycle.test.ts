/**
 * The job lifecycle on both wires: every verb's success paths checked against the raw keyspace,
 * every refusal with its exact text and an unchanged keyspace, retention, promotion at scale,
 * reaping, and host-side validation (nothing sent). REQUEUE and RESCHEDULE: requeue.test.ts; the
 * wake channel: wake.test.ts; the table of server refusals: refusals.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  InvalidArgumentError,
  InvalidIdError,
  InvalidQueueNameError,
  JobNotFoundError,
  LeaseLostError,
  newId,
  ServerError,
} from "../src/index.js";
import {
  jobKey,
  queueKey,
  scriptFor,
  reschedule,
  add,
  pause,
  extend,
  addBulk,
  fail,
  claim,
  remove,
  retry,
  resume,
  complete,
  reap,
  promote,
  requeue,
  enqueue,
} from "../src/protocol.js";
import {
  type ErrorClass,
  k,
  keysOf,
  lifecycle,
  NOT_JOB,
  refused,
  TRACE_512,
  WRONGTYPE,
} from "./support/lifecycle.js";
import { monitor, names, untilSentinel } from "./support/monitor.js";
import { rawCommand } from "./support/resp.js";
import { forEachWire } from "./support/wires.js";

forEachWire("job lifecycle", (ctx) => {
  const { cli, dump, serverMs, timed, within, epoch, refusedUnchanged, leased, buried } = lifecycle(ctx);

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
      ]),
      0,
    );
    assert.deepEqual(await dump("dup"), snap);
    const edge = newId();
    const values = [edge, "", "-999999999999999", "0", "999999999999999", TRACE_512, "", "", "0", "0", ""];
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

  /* ------------------------------------------------------------------ EXTEND */

  test("EXTEND: the new deadline is server time + lease, written as the active score; nothing else changes", async () => {
    const { conn } = ctx();
    const { id, token } = await leased("x", "p", {}, 1000);
    const before = await dump("x");
    const { value: deadline, lo, hi } = await timed(() => extend(conn, "x", id, token, 90_000));
    within(deadline, lo + 90_000, hi + 90_000, "deadline");
    assert.deepEqual(await dump("x"), { ...before, "emq:{x}:active": [id, String(deadline)] });
    const far = await extend(conn, "x", id, token, 999_999_999_999_999);
    assert.ok(far > 999_999_999_999_999, "a 15-digit lease is added exactly");
    assert.deepEqual((await dump("x"))["emq:{x}:active"], [id, String(far)]);
  });

  /* ------------------------------------------------------------------ COMPLETE */

  test("COMPLETE keep > 0: row completed with the result, id in done at finish time; keep 0 deletes the row", async () => {
    const { conn } = ctx();
    const { id, token } = await leased("c", "work");
    const bytes = Buffer.from([0, 13, 10, 255]);
    const { lo, hi } = await timed(() => complete(conn, "c", id, token, bytes, 10));
    const snap = await dump("c");
    assert.deepEqual(snap[jobKey("c", id)], {
      state: "completed",
      attempts: "1",
      payload: "work",
      result: String(bytes),
      ...(await epoch()),
    });
    const raw = await rawCommand(ctx().server.port, ["HGET", jobKey("c", id), "result"], {
      returnBuffers: true,
    });
    assert.deepEqual(raw, bytes, "the result bytes are stored as given");
    const done = snap["emq:{c}:done"] as string[];
    assert.equal(done[0], id);
    within(done[1]!, lo, hi, "finish time");
    assert.deepEqual(Object.keys(snap).sort(), ["emq:{c}:done", jobKey("c", id)].sort());

    const second = await leased("c0", "gone");
    await complete(conn, "c0", second.id, second.token, "r", 0);
    assert.deepEqual(await dump("c0"), {});
  });

  test("COMPLETE retention: done converges to keep, at most 10 trimmed per call, oldest first (ties by id), rows deleted", async () => {
    const { conn } = ctx();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const job = await leased("r", `p${i}`);
      await complete(conn, "r", job.id, job.token, "ok", 3);
      ids.push(job.id);
      assert.ok(((await cli("ZCARD", k("r", "done"))) as number) <= 3);
    }
    const snap = await dump("r");
    const done = snap["emq:{r}:done"] as string[];
    assert.deepEqual(
      done.filter((_, i) => i % 2 === 0),
      ids.slice(-3),
    );
    assert.deepEqual(
      Object.keys(snap).sort(),
      ["emq:{r}:done", ...ids.slice(-3).map((id) => jobKey("r", id))].sort(),
    );

    // 25 old ids at one score: each call trims at most 10, lowest ids first.
    const old = Array.from({ length: 25 }, () => newId()).sort();
    for (const id of old) {
      await cli("ZADD", k("t", "done"), "1000", id);
      await cli("HSET", jobKey("t", id), "state", "completed", "attempts", "1", "payload", "x");
    }
    const sizes: number[] = [];
    const fresh: string[] = [];
    for (let i = 0; i < 4; i++) {
      const job = await leased("t");
      fresh.push(job.id);
      await complete(conn, "t", job.id, job.token, "ok", 3);
      sizes.push((await cli("ZCARD", k("t", "done"))) as number);
      if (i === 0) {
        const left = ((await cli("ZRANGE", k("t", "done"), "0", "-1")) as string[]).slice(0, -1);
        assert.deepEqual(left, old.slice(10), "the 10 lowest ids of the tie went first");
        for (const id of old.slice(0, 10)) assert.equal(await cli("EXISTS", jobKey("t", id)), 0);
      }
    }
    assert.deepEqual(sizes, [16, 7, 3, 3]);
    const last = await dump("t");
    assert.deepEqual(
      (last["emq:{t}:done"] as string[]).filter((_, i) => i % 2 === 0),
      fresh.slice(-3),
    );
    assert.equal(Object.keys(last).length, 4, "done + 3 rows");
  });

  /* ------------------------------------------------------------------ FAIL */

  test("FAIL backoff 0: pending at the row's priority with the error; backoff > 0: scheduled at now + backoff", async () => {
    const { conn } = ctx();
    const e = await epoch();
    const a = await leased("f", "pa", { priority: 4 });
    assert.equal(
      await fail(conn, "f", a.id, a.token, "oops", { backoffMs: 0, maxAttempts: 3, keep: 5 }),
      "pending",
    );
    assert.deepEqual(await dump("f"), {
      [jobKey("f", a.id)]: {
        state: "pending",
        attempts: "1",
        payload: "pa",
        priority: "4",
        error: "oops",
        ...e,
      },
      "emq:{f}:pending": [a.id, "4"],
    });
    const again = await claim(conn, "f", 1000);
    assert.equal(again!.attempts, 2);
    const { value, lo, hi } = await timed(() =>
      fail(conn, "f", a.id, 2, "later", { backoffMs: 45_000, maxAttempts: 3, keep: 5 }),
    );
    assert.equal(value, "scheduled");
    const snap = await dump("f");
    assert.deepEqual(snap[jobKey("f", a.id)], {
      state: "scheduled",
      attempts: "2",
      payload: "pa",
      priority: "4",
      error: "later",
      ...e,
    });
    const schedule = snap["emq:{f}:schedule"] as string[];
    assert.equal(schedule[0], a.id);
    within(schedule[1]!, lo + 45_000, hi + 45_000, "retry due time");
    assert.deepEqual(Object.keys(snap).sort(), ["emq:{f}:schedule", jobKey("f", a.id)].sort());
  });

  test("FAIL dead when attempts reach max attempts (the row's field wins); keep 0 deletes the row; dead retention", async () => {
    const { conn } = ctx();
    const e = await epoch();
    const a = await leased("fd", "x");
    const { value, lo, hi } = await timed(() =>
      fail(conn, "fd", a.id, a.token, "fatal", { backoffMs: 1000, maxAttempts: 1, keep: 5 }),
    );
    assert.equal(value, "dead");
    const snap = await dump("fd");
    assert.deepEqual(snap[jobKey("fd", a.id)], {
      state: "dead",
      attempts: "1",
      payload: "x",
      error: "fatal",
      ...e,
    });
    const dead = snap["emq:{fd}:dead"] as string[];
    assert.equal(dead[0], a.id);
    within(dead[1]!, lo, hi, "dead time");
    assert.equal(Object.keys(snap).length, 2);

    const z = await leased("fz");
    assert.equal(
      await fail(conn, "fz", z.id, z.token, "fatal", { backoffMs: 0, maxAttempts: 1, keep: 0 }),
      "dead",
    );
    assert.deepEqual(await dump("fz"), {});

    // The row's max_attempts (2) wins over the caller's 1, then over the caller's 10.
    const own = await leased("fo", "x", { maxAttempts: 2 });
    assert.equal(
      await fail(conn, "fo", own.id, own.token, "1", { backoffMs: 0, maxAttempts: 1, keep: 5 }),
      "pending",
    );
    const second = await claim(conn, "fo", 1000);
    assert.equal(
      await fail(conn, "fo", own.id, second!.attempts, "2", { backoffMs: 0, maxAttempts: 10, keep: 5 }),
      "dead",
    );

    // Dead retention: 12 old ids + 1 → at most 10 trimmed → 3 left.
    for (let i = 0; i < 12; i++) {
      const id = newId();
      await cli("ZADD", k("fr", "dead"), String(1000 + i), id);
      await cli("HSET", jobKey("fr", id), "state", "dead", "attempts", "1");
    }
    const r = await leased("fr");
    await fail(conn, "fr", r.id, r.token, "x", { backoffMs: 0, maxAttempts: 1, keep: 1 });
    assert.equal(await cli("ZCARD", k("fr", "dead")), 3);
    assert.equal(Object.keys(await dump("fr")).length, 4);
  });

  /* ------------------------------------------------------------------ RETRY */

  test("RETRY: a dead job returns to pending at its priority with max_attempts = attempts + extra", async () => {
    const { conn } = ctx();
    const e = await epoch();
    const id = await buried("rt", { priority: 9 });
    await retry(conn, "rt", id, 2);
    assert.deepEqual(await dump("rt"), {
      [jobKey("rt", id)]: {
        state: "pending",
        attempts: "1",
        payload: "p",
        priority: "9",
        error: "boom",
        max_attempts: "3",
        ...e,
      },
      "emq:{rt}:pending": [id, "9"],
    });
    // attempts never decreases: 2 and 3 are the retried attempts, the 3rd is the last.
    const two = await claim(conn, "rt", 1000);
    assert.equal(two!.attempts, 2);
    assert.equal(await fail(conn, "rt", id, 2, "b", { backoffMs: 0, maxAttempts: 1, keep: 5 }), "pending");
    const three = await claim(conn, "rt", 1000);
    assert.equal(
      await fail(conn, "rt", id, three!.attempts, "c", { backoffMs: 0, maxAttempts: 1, keep: 5 }),
      "dead",
    );
    await retry(conn, "rt", id); // default extra 1
    assert.equal(await cli("HGET", jobKey("rt", id), "max_attempts"), "4");
  });

  test("RETRY refusals: not dead (pending job, row dead but not in dead, in dead but row not dead), not found", async () => {
    const { conn } = ctx();
    const text = "ERR EMQ.RETRY job is not dead";
    const { id } = await add(conn, "rn", "x");
    await refusedUnchanged("rn", () => retry(conn, "rn", id), text);
    await refusedUnchanged("rn", () => conn.eval(scriptFor("RETRY"), keysOf.retry("rn"), [id, "1"]), text);
    const active = await leased("ra");
    await refusedUnchanged("ra", () => retry(conn, "ra", active.id), text);
    const d1 = await buried("rb");
    await cli("ZREM", k("rb", "dead"), d1);
    await refusedUnchanged("rb", () => retry(conn, "rb", d1), text);
    const d2 = await buried("rc");
    await cli("HSET", jobKey("rc", d2), "state", "pending");
    await refusedUnchanged("rc", () => retry(conn, "rc", d2), text);
    await refusedUnchanged(
      "rd",
      () => retry(conn, "rd", newId()),
      "ERR EMQ.RETRY job not found",
      JobNotFoundError,
    );
  });

  /* ------------------------------------------------------------------ PROMOTE */

  test("PROMOTE: moves due ids only, limit at a time, oldest first; keeps priority; orphans removed, not counted", async () => {
    const { conn } = ctx();
    const now = await serverMs();
    const due: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId();
      due.push(id);
      await cli("ZADD", k("p", "schedule"), String(now - 100 + i), id);
      await cli("HSET", jobKey("p", id), "state", "scheduled", "attempts", "0", "payload", `d${i}`);
    }
    await cli("HSET", jobKey("p", due[1]!), "priority", "-3");
    const future = (await add(conn, "p", "f", { delay: 600_000 })).id;
    assert.equal(await promote(conn, "p", 2), 2);
    assert.deepEqual((await dump("p"))["emq:{p}:pending"], [due[1], "-3", due[0], "0"]);
    assert.equal(await cli("HGET", jobKey("p", due[0]!), "state"), "pending");
    assert.equal(await promote(conn, "p", 10_000), 3);
    assert.equal(await promote(conn, "p", 10), 0, "nothing due");
    const snap = await dump("p");
    assert.deepEqual((snap["emq:{p}:schedule"] as string[])[0], future);
    assert.equal((snap["emq:{p}:schedule"] as string[]).length, 2);
    assert.equal((snap["emq:{p}:pending"] as string[]).length, 10);
    for (const id of due) assert.equal((snap[jobKey("p", id)] as Record<string, string>).state, "pending");

    // An orphan id and a non-JOB id (even with a hash row) are removed and not counted.
    const orphan = newId();
    const good = newId();
    await cli("ZADD", k("o", "schedule"), "1", orphan, "2", NOT_JOB, "3", good);
    await cli("HSET", queueKey("o", "job:") + NOT_JOB, "state", "scheduled");
    await cli("HSET", jobKey("o", good), "state", "scheduled", "attempts", "0", "payload", "g");
    assert.equal(await promote(conn, "o", 10), 1);
    assert.deepEqual(await dump("o"), {
      [queueKey("o", "job:") + NOT_JOB]: { state: "scheduled" },
      [jobKey("o", good)]: { state: "pending", attempts: "0", payload: "g" },
      "emq:{o}:pending": [good, "0"],
    });
  });

  test("PROMOTE: 50,000 ids due at one millisecond all move, 10,000 per call in id order; none lost, all claimable", async () => {
    const { conn } = ctx();
    const ids = Array.from({ length: 50_000 }, () => newId()).sort();
    const dueAt = (await serverMs()) - 1;
    await cli(
      "EVAL",
      "for i = 2, #ARGV do redis.call('HSET', KEYS[1] .. ARGV[i], 'state', 'scheduled', 'attempts', '0', " +
        "'payload', ARGV[i]); redis.call('ZADD', KEYS[2], ARGV[1], ARGV[i]) end return 1",
      2,
      queueKey("big", "job:"),
      k("big", "schedule"),
      String(dueAt),
      ...ids,
    );
    for (let call = 1; call <= 5; call++) {
      assert.equal(await promote(conn, "big", 10_000), 10_000);
      const pending = (await cli("ZRANGE", k("big", "pending"), "0", "-1")) as string[];
      assert.deepEqual(pending, ids.slice(0, call * 10_000), `after call ${call}: the oldest ids, in order`);
    }
    assert.equal(await promote(conn, "big", 10_000), 0);
    assert.equal(await cli("EXISTS", k("big", "schedule")), 0);
    const claimed: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const jobs = await Promise.all(Array.from({ length: 5000 }, () => claim(conn, "big", 60_000)));
      for (const job of jobs) claimed.push(job!.id);
    }
    assert.equal(await claim(conn, "big", 60_000), null);
    assert.deepEqual(claimed.sort(), ids);
    assert.equal(await cli("ZCARD", k("big", "active")), 50_000);
  });

  /* ------------------------------------------------------------------ REAP */

  test("REAP: expired leases back to pending (at priority), exhausted ones dead with 'lease expired'; live leases kept", async () => {
    const { conn } = ctx();
    const e = await epoch();
    const back = await leased("rp", "b", { priority: 2 }, 1);
    const gone = await leased("rp", "g", { maxAttempts: 1 }, 1);
    const live = await leased("rp", "l", {}, 600_000);
    await sleep(5);
    const { value, lo, hi } = await timed(() => reap(conn, "rp", { limit: 100, maxAttempts: 3, keep: 10 }));
    assert.deepEqual(value, { requeued: [back.id], dead: [gone.id] });
    const snap = await dump("rp");
    assert.deepEqual(snap[jobKey("rp", back.id)], {
      state: "pending",
      attempts: "1",
      payload: "b",
      priority: "2",
      ...e,
    });
    assert.deepEqual(snap[jobKey("rp", gone.id)], {
      state: "dead",
      attempts: "1",
      payload: "g",
      max_attempts: "1",
      error: "lease expired",
      ...e,
    });
    assert.deepEqual(snap["emq:{rp}:pending"], [back.id, "2"]);
    assert.deepEqual(snap["emq:{rp}:active"], [live.id, String(live.deadline)]);
    const dead = snap["emq:{rp}:dead"] as string[];
    assert.equal(dead[0], gone.id);
    within(dead[1]!, lo, hi, "dead time");
    assert.deepEqual(await reap(conn, "rp", { limit: 100, maxAttempts: 3, keep: 10 }), {
      requeued: [],
      dead: [],
    });
  });

  test("REAP: limit respected (earliest deadline first), caller's max attempts, keep 0, orphans dropped", async () => {
    const { conn } = ctx();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await leased("rl", `p${i}`, {}, 1)).id);
    await sleep(5);
    assert.deepEqual(await reap(conn, "rl", { limit: 2, maxAttempts: 5, keep: 1 }), {
      requeued: ids.slice(0, 2),
      dead: [],
    });
    assert.equal(await cli("ZCARD", k("rl", "active")), 3);
    assert.deepEqual(await reap(conn, "rl", { limit: 10, maxAttempts: 1, keep: 0 }), {
      requeued: [],
      dead: ids.slice(2),
    });
    for (const id of ids.slice(2)) assert.equal(await cli("EXISTS", jobKey("rl", id)), 0);
    assert.equal(await cli("EXISTS", k("rl", "dead")), 0);

    const orphan = newId();
    await cli("ZADD", k("ro", "active"), "1", orphan, "2", NOT_JOB);
    await cli("HSET", queueKey("ro", "job:") + NOT_JOB, "state", "active");
    assert.deepEqual(await reap(conn, "ro", { limit: 10, maxAttempts: 3, keep: 1 }), {
      requeued: [],
      dead: [],
    });
    assert.deepEqual(await dump("ro"), { [queueKey("ro", "job:") + NOT_JOB]: { state: "active" } });
  });

  /* ------------------------------------------------------------------ lease gate, row gate */

  test("lease gate: a reaped worker gets LeaseLostError (not active), after a re-claim (stale token); the new holder wins", async () => {
    const { conn } = ctx();
    const first = await leased("lg", "x", {}, 1);
    await sleep(5);
    await reap(conn, "lg", { limit: 10, maxAttempts: 5, keep: 1 });
    const calls: [string, () => Promise<unknown>][] = [
      ["EXTEND", () => extend(conn, "lg", first.id, first.token, 1000)],
      ["COMPLETE", () => complete(conn, "lg", first.id, first.token, "r", 5)],
      ["FAIL", () => fail(conn, "lg", first.id, first.token, "e", { backoffMs: 0, maxAttempts: 5, keep: 5 })],
    ];
    for (const [verb, call] of calls) {
      const before = await dump("lg");
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof LeaseLostError && err instanceof ServerError);
        assert.equal(err.message, `ERR EMQ.${verb} job is not active`);
        assert.equal(err.reason, "not active");
        assert.equal(err.code, "EMQ_LEASE_LOST");
        return true;
      });
      assert.deepEqual(await dump("lg"), before);
    }
    const second = await claim(conn, "lg", 30_000);
    assert.equal(second!.attempts, 2);
    for (const [verb, call] of calls) {
      const before = await dump("lg");
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof LeaseLostError);
        assert.equal(err.message, `ERR EMQ.${verb} stale lease token`);
        assert.equal(err.reason, "stale token");
        return true;
      });
      assert.deepEqual(await dump("lg"), before);
    }
    await complete(conn, "lg", second!.id, second!.attempts, "done", 5);
    assert.equal(await cli("HGET", jobKey("lg", first.id), "state"), "completed");
  });

  test("row and lease gates on EXTEND, COMPLETE, FAIL, REQUEUE: not found, state or membership not active, stale token", async () => {
    const { conn } = ctx();
    const lease = [
      { verb: "EXTEND", script: scriptFor("EXTEND"), keys: keysOf.extend, tail: ["1000"] },
      { verb: "COMPLETE", script: scriptFor("COMPLETE"), keys: keysOf.complete, tail: ["r", "5"] },
      { verb: "FAIL", script: scriptFor("FAIL"), keys: keysOf.fail, tail: ["e", "0", "3", "5"] },
      { verb: "REQUEUE", script: scriptFor("REQUEUE"), keys: keysOf.requeue, tail: ["3"] },
    ];
    let n = 0;
    for (const { verb, script, keys, tail } of lease) {
      const run = (q: string, id: string, token: string) => () =>
        conn.eval(script, keys(q), [id, token, ...tail]);
      const q = () => `g${n++}`;
      const notFound = `ERR EMQ.${verb} job not found`;
      const notActive = `ERR EMQ.${verb} job is not active`;
      const stale = `ERR EMQ.${verb} stale lease token`;

      const q1 = q();
      await refusedUnchanged(q1, run(q1, newId(), "1"), notFound);
      const str = newId();
      await cli("SET", jobKey(q1, str), "x");
      await refusedUnchanged(q1, run(q1, str, "1"), notFound);

      const q2 = q();
      const { id: pendingId } = await add(conn, q2, "x");
      await refusedUnchanged(q2, run(q2, pendingId, "1"), notActive);

      const q3 = q();
      const a = await leased(q3);
      await cli("ZREM", k(q3, "active"), a.id);
      await refusedUnchanged(q3, run(q3, a.id, "1"), notActive);

      const q4 = q();
      const b = await leased(q4);
      await cli("HSET", jobKey(q4, b.id), "state", "pending");
      await refusedUnchanged(q4, run(q4, b.id, "1"), notActive);

      const q5 = q();
      const c = await leased(q5);
      await refusedUnchanged(q5, run(q5, c.id, "2"), stale);
      await refusedUnchanged(q5, run(q5, c.id, "11"), stale);
      await run(q5, c.id, "1")(); // the right token passes
    }
    const q6 = "g-host";
    await refused(() => extend(conn, q6, newId(), 1, 1000), "ERR EMQ.EXTEND job not found", JobNotFoundError);
    await refused(
      () => complete(conn, q6, newId(), 1, "r", 1),
      "ERR EMQ.COMPLETE job not found",
      JobNotFoundError,
    );
    await refused(
      () => fail(conn, q6, newId(), 1, "e", { backoffMs: 0, maxAttempts: 1, keep: 1 }),
      "ERR EMQ.FAIL job not found",
      JobNotFoundError,
    );
    assert.deepEqual(await dump(q6), {});
  });

  /* ------------------------------------------------------------------ REMOVE */

  test("REMOVE: pending, scheduled, completed, dead jobs go with their row; absent → false; active refused", async () => {
    const { conn } = ctx();
    const p = (await add(conn, "rm", "p")).id;
    const s = (await add(conn, "rm2", "s", { delay: 60_000 })).id;
    const c = await leased("rm3");
    await complete(conn, "rm3", c.id, c.token, "r", 5);
    const d = await buried("rm4");
    for (const [q, id] of [
      ["rm", p],
      ["rm2", s],
      ["rm3", c.id],
      ["rm4", d],
    ] as const) {
      assert.equal(await remove(conn, q, id), true);
      assert.deepEqual(await dump(q), {}, `${q} empty after remove`);
    }
    const before = await dump("rm");
    assert.equal(await remove(conn, "rm", newId()), false);
    assert.deepEqual(await dump("rm"), before);
    // A row with no (or an unknown) state: only the row goes.
    const odd = newId();
    await cli("HSET", jobKey("rm5", odd), "payload", "x");
    await cli("ZADD", k("rm5", "pending"), "0", odd);
    assert.equal(await remove(conn, "rm5", odd), true);
    assert.deepEqual(await dump("rm5"), { "emq:{rm5}:pending": [odd, "0"] });

    const a = await leased("rm6");
    await refusedUnchanged("rm6", () => remove(conn, "rm6", a.id), "ERR EMQ.REMOVE job is active");
    const str = newId();
    await cli("SET", jobKey("rm7", str), "x");
    await refusedUnchanged("rm7", () => remove(conn, "rm7", str), WRONGTYPE);
  });

  /* ------------------------------------------------------------------ PAUSE / RESUME */

  test("PAUSE / RESUME: 1 when changed, 0 when already so; the flag gates claim", async () => {
    const { conn } = ctx();
    await add(conn, "pz", "x");
    assert.equal(await pause(conn, "pz"), true);
    assert.deepEqual((await dump("pz"))["emq:{pz}:meta"], { paused: "1" });
    const before = await dump("pz");
    assert.equal(await pause(conn, "pz"), false);
    assert.deepEqual(await dump("pz"), before);
    assert.equal(await claim(conn, "pz", 1000), null);
    assert.equal(await resume(conn, "pz"), true);
    assert.equal((await dump("pz"))["emq:{pz}:meta"], undefined);
    assert.equal(await resume(conn, "pz"), false);
    assert.ok(await claim(conn, "pz", 1000));
    // Other meta fields stay.
    await cli("HSET", k("pm", "meta"), "other", "v");
    assert.equal(await pause(conn, "pm"), true);
    assert.equal(await resume(conn, "pm"), true);
    assert.deepEqual(await dump("pm"), { "emq:{pm}:meta": { other: "v" } });
  });

  /* ------------------------------------------------------------------ malformed row fields */

  test("malformed row fields fall back: priority → 0, attempts → 0, max_attempts → the caller's value", async () => {
    const { conn } = ctx();
    // PROMOTE: a priority that is not a *priority* text scores 0.
    const bad = ["1.5", "-0", "01", "inf", "x", ""];
    const ids = bad.map(() => newId());
    for (const [i, id] of ids.entries()) {
      await cli("ZADD", k("mf", "schedule"), "1", id);
      await cli("HSET", jobKey("mf", id), "state", "scheduled", "attempts", "0", "priority", bad[i]!);
    }
    assert.equal(await promote(conn, "mf", 100), bad.length);
    const pending = (await dump("mf"))["emq:{mf}:pending"] as string[];
    assert.deepEqual(
      pending.filter((_, i) => i % 2 === 1),
      bad.map(() => "0"),
    );
    // REAP: attempts "x" counts as 0, max_attempts "0" is not a *positive*: the caller's 1 applies.
    const id = newId();
    await cli("ZADD", k("mr", "active"), "1", id);
    await cli("HSET", jobKey("mr", id), "state", "active", "attempts", "x", "max_attempts", "0");
    assert.deepEqual(await reap(conn, "mr", { limit: 10, maxAttempts: 1, keep: 5 }), {
      requeued: [id],
      dead: [],
    });
    // RETRY: attempts "07" is not a *count*: max_attempts = 0 + extra.
    const d = newId();
    await cli("ZADD", k("md", "dead"), "1", d);
    await cli("HSET", jobKey("md", d), "state", "dead", "attempts", "07");
    await retry(conn, "md", d, 2);
    assert.equal(await cli("HGET", jobKey("md", d), "max_attempts"), "2");
  });

  /* ------------------------------------------------------------------ reply types */

  test("raw replies: integers as integers, states as bulk strings, REAP as two arrays of bulk strings", async () => {
    const { conn } = ctx();
    const id = newId();
    assert.equal(
      await conn.eval(scriptFor("ADD"), keysOf.add("rt1", id), [
        id,
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
      ]),
      1,
    );
    const job = (await claim(conn, "rt1", 30_000))!;
    const token = String(job.attempts);
    const deadline = await conn.eval(scriptFor("EXTEND"), keysOf.extend("rt1"), [id, token, "5000"]);
    assert.equal(typeof deadline, "number");
    const state = await conn.eval(scriptFor("FAIL"), keysOf.fail("rt1"), [id, token, "e", "0", "1", "5"]);
    assert.ok(Buffer.isBuffer(state), "FAIL answers a bulk string");
    assert.equal(state.toString(), "dead");
    assert.equal(await conn.eval(scriptFor("RETRY"), keysOf.retry("rt1"), [id, "3"]), 1);
    const again = (await claim(conn, "rt1", 1))!;
    await sleep(5);
    const reaped = (await conn.eval(scriptFor("REAP"), keysOf.reap("rt1"), ["10", "5", "5"])) as unknown[];
    assert.deepEqual(reaped, [[Buffer.from(again.id)], []]);
    assert.deepEqual(await conn.eval(scriptFor("REAP"), keysOf.reap("rt1"), ["10", "5", "5"]), [[], []]);
    assert.equal(await conn.eval(scriptFor("PROMOTE"), keysOf.promote("rt1"), ["10"]), 0);
    const third = (await claim(conn, "rt1", 30_000))!;
    const done = [id, String(third.attempts), "r", "5"];
    assert.equal(await conn.eval(scriptFor("COMPLETE"), keysOf.complete("rt1"), done), 1);
    assert.equal(await conn.eval(scriptFor("REMOVE"), keysOf.remove("rt1"), [id]), 1);
    assert.equal(await conn.eval(scriptFor("REMOVE"), keysOf.remove("rt1"), [id]), 0);
    assert.equal(await conn.eval(scriptFor("PAUSE"), keysOf.meta("rt1"), []), 1);
    assert.equal(await conn.eval(scriptFor("PAUSE"), keysOf.meta("rt1"), []), 0);
    assert.equal(await conn.eval(scriptFor("RESUME"), keysOf.resume("rt1"), []), 1);
    assert.equal(await conn.eval(scriptFor("RESUME"), keysOf.resume("rt1"), []), 0);
  });

  /* ------------------------------------------------------------------ host validation */

  test("bad input is refused on the host with a typed error, and nothing is sent", async () => {
    const { conn, server } = ctx();
    const id = newId();
    const fo = { backoffMs: 0, maxAttempts: 1, keep: 1 };
    const ro = { limit: 10, maxAttempts: 1, keep: 1 };
    type Bad = [() => Promise<unknown>, ErrorClass];
    const bad: Bad[] = [];
    const queues = ["a{b", "a}b", "a\u0000b", 5 as unknown as string, null as unknown as string];
    for (const q of queues) {
      bad.push(
        [() => add(conn, q, "x"), InvalidQueueNameError],
        [() => extend(conn, q, id, 1, 1000), InvalidQueueNameError],
        [() => complete(conn, q, id, 1, "r", 1), InvalidQueueNameError],
        [() => fail(conn, q, id, 1, "e", fo), InvalidQueueNameError],
        [() => retry(conn, q, id), InvalidQueueNameError],
        [() => promote(conn, q, 10), InvalidQueueNameError],
        [() => reap(conn, q, ro), InvalidQueueNameError],
        [() => remove(conn, q, id), InvalidQueueNameError],
        [() => pause(conn, q), InvalidQueueNameError],
        [() => resume(conn, q), InvalidQueueNameError],
        [() => reschedule(conn, q, id, 1, 10), InvalidQueueNameError],
        [() => requeue(conn, q, id, 1, 3), InvalidQueueNameError],
      );
    }
    const ids = [
      "JOB123",
      "job0Nb1VTbfnu4",
      NOT_JOB,
      `${id}x`,
      "",
      7 as unknown as string,
      null as unknown as string,
    ];
    for (const badId of ids) {
      bad.push(
        [() => add(conn, "q", "x", { id: badId }), InvalidIdError],
        [() => enqueue(conn, "q", "x", { id: badId }), InvalidIdError],
        [() => extend(conn, "q", badId, 1, 1000), InvalidIdError],
        [() => complete(conn, "q", badId, 1, "r", 1), InvalidIdError],
        [() => fail(conn, "q", badId, 1, "e", fo), InvalidIdError],
        [() => retry(conn, "q", badId), InvalidIdError],
        [() => remove(conn, "q", badId), InvalidIdError],
        [() => reschedule(conn, "q", badId, 1, 10), InvalidIdError],
        [() => requeue(conn, "q", badId, 1, 3), InvalidIdError],
      );
    }
    const notInts = [
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "1" as unknown as number,
      null as unknown as number,
    ];
    const tooBig = 1_000_000_000_000_000;
    const arg = (fn: () => Promise<unknown>): Bad => [fn, InvalidArgumentError];
    for (const v of [...notInts, 0, -1, tooBig]) {
      bad.push(arg(() => extend(conn, "q", id, v, 1000)));
      bad.push(arg(() => extend(conn, "q", id, 1, v)));
      bad.push(arg(() => complete(conn, "q", id, v, "r", 1)));
      bad.push(arg(() => fail(conn, "q", id, v, "e", fo)));
      bad.push(arg(() => fail(conn, "q", id, 1, "e", { ...fo, maxAttempts: v })));
      bad.push(arg(() => retry(conn, "q", id, v)));
      bad.push(arg(() => promote(conn, "q", v)));
      bad.push(arg(() => reap(conn, "q", { ...ro, limit: v })));
      bad.push(arg(() => reap(conn, "q", { ...ro, maxAttempts: v })));
      bad.push(arg(() => reschedule(conn, "q", id, v, 10)));
      bad.push(arg(() => requeue(conn, "q", id, v, 3)));
      bad.push(arg(() => requeue(conn, "q", id, 1, v)));
    }
    for (const v of [...notInts, -1, tooBig]) {
      bad.push(arg(() => add(conn, "q", "x", { delay: v })));
      bad.push(arg(() => add(conn, "q", "x", { maxAttempts: v })));
      bad.push(arg(() => complete(conn, "q", id, 1, "r", v)));
      bad.push(arg(() => fail(conn, "q", id, 1, "e", { ...fo, backoffMs: v })));
      bad.push(arg(() => fail(conn, "q", id, 1, "e", { ...fo, keep: v })));
      bad.push(arg(() => reap(conn, "q", { ...ro, keep: v })));
      bad.push(arg(() => reschedule(conn, "q", id, 1, v)));
    }
    for (const v of [...notInts, tooBig, -tooBig]) bad.push(arg(() => add(conn, "q", "x", { priority: v })));
    for (const v of [10_001, 1_000_000]) {
      bad.push(arg(() => promote(conn, "q", v)));
      bad.push(arg(() => reap(conn, "q", { ...ro, limit: v })));
    }
    bad.push(
      arg(() => add(conn, "q", 5 as unknown as string)),
      arg(() => add(conn, "q", null as unknown as string)),
      arg(() => add(conn, "q", "x", "opts" as never)),
      arg(() => complete(conn, "q", id, 1, { a: 1 } as never, 1)),
      arg(() => fail(conn, "q", id, 1, 5 as never, fo)),
      arg(() => fail(conn, "q", id, 1, "e", undefined as never)),
      arg(() => fail(conn, "q", id, 1, "e", { backoffMs: 0, maxAttempts: 1 } as never)),
      arg(() => reap(conn, "q", undefined as never)),
      arg(() => reap(conn, "q", { limit: 1, keep: 1 } as never)),
    );
    const mon = await monitor(server.port);
    for (const [i, [call, type]] of bad.entries()) {
      await assert.rejects(call(), (e: unknown) => e instanceof type, `bad call #${i}: ${String(call)}`);
    }
    assert.deepEqual(names(await untilSentinel(mon, conn)), ["ECHO"]);
  });
});

/**
 * The job lifecycle on both wires: the lease and row gates, REMOVE, PAUSE / RESUME, malformed row
 * fields, raw reply types, and host-side validation (nothing sent), each checked against the raw
 * keyspace. ADD and addBulk: lifecycle.add.test.ts; EXTEND, COMPLETE, FAIL, RETRY:
 * lifecycle.settle.test.ts; PROMOTE and REAP: lifecycle.promote-reap.test.ts; REQUEUE and
 * RESCHEDULE: requeue.test.ts; the wake channel: wake.test.ts; the table of server refusals:
 * refusals.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { InvalidArgumentError, JobNotFoundError, LeaseLostError, ServerError } from "../src/index.js";
import { InvalidIdError, InvalidQueueNameError } from "../src/errors.js";
import {
  add,
  claim,
  complete,
  enqueue,
  extend,
  fail,
  jobKey,
  newId,
  pause,
  promote,
  reap,
  remove,
  requeue,
  reschedule,
  resume,
  retry,
  scriptFor,
} from "../src/protocol.js";
import { type ErrorClass, k, keysOf, lifecycle, NOT_JOB, refused, WRONGTYPE } from "./support/lifecycle.js";
import { monitor, names, untilSentinel } from "./support/monitor.js";
import { forEachWire } from "./support/wires.js";

forEachWire("job lifecycle", (ctx) => {
  const { cli, dump, refusedUnchanged, leased, buried } = lifecycle(ctx);

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
      { verb: "FAIL", script: scriptFor("FAIL"), keys: keysOf.fail, tail: ["e", "0", "3", "5", ""] },
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
        "",
        "",
      ]),
      1,
    );
    const job = (await claim(conn, "rt1", 30_000))!;
    const token = String(job.attempts);
    const deadline = await conn.eval(scriptFor("EXTEND"), keysOf.extend("rt1"), [id, token, "5000"]);
    assert.equal(typeof deadline, "number");
    const state = await conn.eval(scriptFor("FAIL"), keysOf.fail("rt1"), [id, token, "e", "0", "1", "5", ""]);
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
      // maxAttempts 0: dead now (an UnrecoverableError), so only below 0 is bad.
      bad.push(arg(() => fail(conn, "q", id, 1, "e", { ...fo, maxAttempts: v })));
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

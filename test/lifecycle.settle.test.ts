/**
 * A leased job's way out on both wires, checked against the raw keyspace: EXTEND, COMPLETE and its
 * retention, FAIL (backoff, dead, dead retention) and RETRY with its refusals. The rest of the
 * lifecycle: lifecycle.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobNotFoundError } from "../src/index.js";
import { add, claim, complete, extend, fail, jobKey, newId, retry, scriptFor } from "../src/protocol.js";
import { k, keysOf, lifecycle } from "./support/lifecycle.js";
import { rawCommand } from "./support/resp.js";
import { forEachWire } from "./support/wires.js";

forEachWire("job lifecycle: EXTEND, COMPLETE, FAIL, RETRY", (ctx) => {
  const { cli, dump, timed, within, epoch, refusedUnchanged, leased, buried } = lifecycle(ctx);

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
    const { id, token, on } = await leased("c", "work");
    const bytes = Buffer.from([0, 13, 10, 255]);
    const { lo, hi } = await timed(() => complete(conn, "c", id, token, bytes, 10));
    const snap = await dump("c");
    assert.deepEqual(snap[jobKey("c", id)], {
      state: "completed",
      attempts: "1",
      payload: "work",
      result: String(bytes),
      ...(await epoch()),
      ...on,
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
        ...a.on,
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
      processed_on: String(again!.deadline - 1000), // the second lease's
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
      ...a.on,
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
    const { value: id, lo, hi } = await timed(() => buried("rt", { priority: 9 }));
    await retry(conn, "rt", id, 2);
    const snap = await dump("rt");
    // processed_on: the dead attempt's lease time, kept through RETRY.
    const on = (snap[jobKey("rt", id)] as Record<string, string>).processed_on!;
    within(on, lo, hi, "processed_on");
    assert.deepEqual(snap, {
      [jobKey("rt", id)]: {
        state: "pending",
        attempts: "1",
        payload: "p",
        priority: "9",
        error: "boom",
        max_attempts: "3",
        ...e,
        processed_on: on,
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
});

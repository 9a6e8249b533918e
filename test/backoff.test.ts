import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assertBackoff, backoffDelay } from "../src/backoff.js";
import { InvalidArgumentError } from "../src/errors.js";
import { WakeGate } from "../src/wake.js";

describe("backoff", () => {
  test("fixed is constant", () => {
    for (const attempt of [1, 2, 10])
      assert.equal(backoffDelay({ type: "fixed", delayMs: 250 }, attempt, null), 250);
  });
  test("exponential doubles per attempt, capped, jitter within ±jitter", () => {
    const opt = { type: "exponential", delayMs: 100, maxDelayMs: 1000 } as const;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((a) => backoffDelay(opt, a, null)),
      [100, 200, 400, 800, 1000, 1000],
    );
    const jittered = { type: "exponential", delayMs: 1000, jitter: 0.2 } as const;
    assert.equal(
      backoffDelay(jittered, 1, null, () => 0),
      800,
    );
    assert.equal(
      backoffDelay(jittered, 1, null, () => 1),
      1200,
    );
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(jittered, 3, null);
      assert.ok(d >= 3200 && d <= 4800, String(d));
    }
  });
  test("custom function gets attempt and error; a bad result is a typed error", () => {
    const seen: unknown[] = [];
    const fn = (attempt: number, err: unknown) => {
      seen.push(attempt, err);
      return attempt * 7;
    };
    assert.equal(backoffDelay(fn, 3, "boom"), 21);
    assert.deepEqual(seen, [3, "boom"]);
    assert.throws(() => backoffDelay(() => -1, 1, null), InvalidArgumentError);
    assert.throws(() => backoffDelay(() => Number.NaN, 1, null), InvalidArgumentError);
  });
  test("assertBackoff refuses malformed options", () => {
    for (const bad of [
      null,
      {},
      { type: "linear", delayMs: 1 },
      { type: "fixed" },
      { type: "fixed", delayMs: -1 },
      { type: "exponential", delayMs: 1, jitter: 2 },
    ]) {
      assert.throws(() => assertBackoff(bad), InvalidArgumentError, JSON.stringify(bad));
    }
    assertBackoff({ type: "fixed", delayMs: 0 });
    assertBackoff(() => 1);
  });
});

describe("wake gate", () => {
  test("wakeOne releases exactly one waiter, in order", async () => {
    const gate = new WakeGate(60_000, 4);
    const order: number[] = [];
    const a = gate.wait().then(() => order.push(1));
    const b = gate.wait().then(() => order.push(2));
    assert.equal(gate.waiting, 2);
    gate.wakeOne();
    await a;
    assert.deepEqual(order, [1]);
    assert.equal(gate.waiting, 1);
    gate.wakeAll();
    await b;
    assert.deepEqual(order, [1, 2]);
  });
  test("a wake with no waiter is kept as a permit (bounded), so the next wait returns at once", async () => {
    const gate = new WakeGate(60_000, 2);
    gate.wakeOne();
    gate.wakeOne();
    gate.wakeOne();
    await gate.wait();
    await gate.wait();
    let third = false;
    const pending = gate.wait().then(() => {
      third = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(third, false, "only maxPermits wakes are kept");
    gate.wakeAll();
    await pending;
  });
  test("the safety tick releases a waiter without any message", async () => {
    const gate = new WakeGate(30, 1);
    const t0 = Date.now();
    await gate.wait();
    assert.ok(Date.now() - t0 >= 20);
  });
});

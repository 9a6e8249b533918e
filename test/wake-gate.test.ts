import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WakeGate, wakeCount } from "../src/wake.js";

const tick = () => new Promise((r) => setTimeout(r, 20));

/** `n` waiters on `gate`; `released()` says how many have been let through. */
function waiters(gate: WakeGate, n: number, timeoutMs?: number) {
  let released = 0;
  const all = Array.from({ length: n }, () => gate.wait(timeoutMs).then(() => released++));
  return { released: () => released, all: Promise.all(all) };
}

describe("wake gate", () => {
  test("wake(1) releases exactly one waiter, in order", async () => {
    const gate = new WakeGate(60_000, 4);
    const order: number[] = [];
    const a = gate.wait().then(() => order.push(1));
    const b = gate.wait().then(() => order.push(2));
    assert.equal(gate.waiting, 2);
    gate.wake(1);
    await a;
    assert.deepEqual(order, [1]);
    assert.equal(gate.waiting, 1);
    gate.wakeAll();
    await b;
    assert.deepEqual(order, [1, 2]);
  });

  test("wake(n) releases n waiters at once; the rest keep waiting", async () => {
    const gate = new WakeGate(60_000, 50);
    const w = waiters(gate, 10);
    gate.wake(7);
    await tick();
    assert.equal(w.released(), 7);
    assert.equal(gate.waiting, 3);
    gate.wakeAll();
    await w.all;
  });

  test("a wake larger than the waiters keeps the rest as permits, bounded by maxPermits", async () => {
    const gate = new WakeGate(60_000, 3);
    const w = waiters(gate, 2);
    gate.wake(2000);
    await w.all;
    await gate.wait();
    await gate.wait();
    await gate.wait();
    let fourth = false;
    const pending = gate.wait().then(() => {
      fourth = true;
    });
    await tick();
    assert.equal(fourth, false, "only maxPermits wakes are kept");
    gate.wakeAll();
    await pending;
  });

  test("releaseOne lets one waiter through and keeps no permit when nobody waits", async () => {
    const gate = new WakeGate(60_000, 10);
    gate.releaseOne();
    let got = false;
    const pending = gate.wait().then(() => {
      got = true;
    });
    await tick();
    assert.equal(got, false, "releaseOne with no waiter must not leave a permit");
    gate.releaseOne();
    await pending;
    assert.equal(got, true);
  });

  test("wait(timeout) resolves after the timeout and leaves the gate (a later wake goes to the next waiter)", async () => {
    const gate = new WakeGate(60_000, 10);
    await gate.wait(15);
    assert.equal(gate.waiting, 0);
    const w = waiters(gate, 1);
    gate.wake(1);
    await w.all;
    assert.equal(w.released(), 1);
  });

  test("a wake releases a waiter before its timeout", async () => {
    const gate = new WakeGate(60_000, 10);
    const started = Date.now();
    const waiting = gate.wait(60_000);
    gate.wake(1);
    await waiting;
    assert.ok(Date.now() - started < 30_000);
  });

  test("the safety tick releases a waiter without any message", async () => {
    const gate = new WakeGate(30, 1);
    const w = waiters(gate, 2);
    await tick();
    await tick();
    assert.ok(w.released() >= 1);
    gate.wakeAll();
    await w.all;
  });
});

describe("wake gate without its safety tick (a blocking claim waits in the server)", () => {
  test("no tick releases a waiter while it is off; wakes still do; on again, it ticks", async () => {
    const gate = new WakeGate(10, 4);
    gate.setTicking(false);
    const w = waiters(gate, 2);
    await tick();
    await tick();
    assert.equal(w.released(), 0, "no safety tick");
    gate.wake(1);
    await tick();
    assert.equal(w.released(), 1, "a wake releases");
    gate.setTicking(true);
    await tick();
    await tick();
    assert.equal(w.released(), 2, "the tick runs again");
    await w.all;
  });
});

describe("wakeCount", () => {
  test("a decimal count as sent; 0 for an id that entered the schedule; anything else means one", () => {
    assert.equal(wakeCount("1"), 1);
    assert.equal(wakeCount("2000"), 2000);
    assert.equal(wakeCount(Buffer.from("37")), 37);
    assert.equal(wakeCount("0"), 0);
    for (const other of ["", "00", "-3", "x", "1.5", "1e3", "1e400", " 1"])
      assert.equal(wakeCount(other), 1, other);
  });
});

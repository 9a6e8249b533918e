/**
 * What the dashboard keeps of a queue's past, bounded: the last minute's samples (their sum is the
 * minute's average) and an hour of one-minute buckets, however long it runs. Pure.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { QueueSeries } from "../src/dashboard/series.js";

test("two hours sampled each second: the last minute summed, sixty buckets kept", () => {
  const s = new QueueSeries();
  const start = Date.UTC(2026, 0, 1);
  // One completion every other second, one failed attempt every tenth, for two hours.
  for (let i = 0; i < 7200; i++) {
    s.add({
      at: start + i * 1000,
      seconds: i === 0 ? 0 : 1,
      completed: i % 2 === 0 ? 1 : 0,
      failed: i % 10 === 0 ? 1 : 0,
      latencyMs: i % 60,
    });
  }
  const m = s.minute()!;
  // The samples of the last 60 s: 30 completions, 6 failed attempts, over 60 seconds.
  assert.deepEqual(m, { completed: 30, failed: 6, seconds: 60 });
  const hour = s.hour();
  assert.equal(hour.length, 60, "an hour of buckets, no more");
  assert.equal(hour.at(-1)!.at, start + 119 * 60_000, "the newest is the last minute");
  assert.deepEqual(
    hour.map((b) => [b.completed, b.failed, b.latencyMs]),
    hour.map(() => [30, 6, 59]),
  );
});

test("a queue whose bus is off has no minute figures", () => {
  const s = new QueueSeries();
  s.add({ at: 1000, seconds: 0, completed: null, failed: null, latencyMs: 0 });
  assert.equal(s.minute(), null);
});

/**
 * `QueueEvents` on both wires: every event of 10,000 jobs processed at full speed when the reader
 * keeps up; a `gap` (exact, or an upper bound for a resumed reader) when the reader is slower
 * than the trim; typed events with their reasons, delays and data; the bus switched off; a
 * reader that survives a cut connection, and a watchdog that frees a read the server never
 * answers.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type BusEvent,
  connect,
  type EventKind,
  type Gap,
  Queue,
  QueueEvents,
  Worker,
} from "../src/index.js";
import { WatchdogError } from "../src/errors.js";
import { startProxy } from "./support/proxy.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";

/** A reader's deliveries: every event, counts by kind, the gaps, the errors. */
function record(events: QueueEvents) {
  const seen = { all: [] as BusEvent[], kinds: {} as Partial<Record<EventKind, number>>, gaps: [] as Gap[] };
  const errors: unknown[] = [];
  events.on("event", (e) => {
    seen.all.push(e);
    seen.kinds[e.kind] = (seen.kinds[e.kind] ?? 0) + 1;
  });
  events.on("gap", (g) => seen.gaps.push(g));
  events.on("error", (err) => errors.push(err));
  return { ...seen, errors };
}

const FAST = { promoteEveryMs: 50, reapEveryMs: 100, idleCheckMs: 200 };

forEachWire("QueueEvents", (ctx) => {
  test("receives every event of 10,000 jobs processed at full speed (it keeps up)", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-full", conn);
    const events = new QueueEvents("ev-full", conn);
    const got = record(events);
    await events.ready;
    const worker = new Worker(q, () => {}, { concurrency: 100, keepCompleted: 0, ...FAST });
    await worker.ready;
    const started = performance.now();
    for (let i = 0; i < 10; i++) {
      await q.addBulk(Array.from({ length: 1000 }, (_, j) => ({ payload: `p${i}.${j}` })));
    }
    await until("10,000 completed events", () => (got.kinds.completed ?? 0) === 10_000, 60_000);
    const seconds = (performance.now() - started) / 1000;
    await worker.close();
    await events.close();
    assert.deepEqual(got.kinds, { added: 10_000, active: 10_000, completed: 10_000 });
    assert.deepEqual(got.gaps, [], "no gap: the reader kept up");
    assert.deepEqual(got.errors, []);
    const ids = new Set(got.all.filter((e) => e.kind === "completed").map((e) => e.jobId));
    assert.equal(ids.size, 10_000, "every job once");
    const order = got.all.map((e) => e.eventId);
    assert.deepEqual([...order].sort(compareIds), order, "in stream order");
    console.log(`  [wire ${ctx().wire}] 30,000 events of 10,000 jobs in ${seconds.toFixed(2)} s`);
  });

  test("a reader slower than the trim gets a gap saying exactly how much it missed", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-gap", conn);
    await q.setEvents({ maxLen: 10 });
    const events = new QueueEvents("ev-gap", conn);
    const got = record(events);
    await events.ready;
    for (let i = 0; i < 5; i++) await q.add(`early ${i}`);
    await until("the first 5", () => got.all.length === 5, 10_000);
    events.pause();
    await q.addBulk(Array.from({ length: 200 }, (_, i) => ({ payload: `late ${i}` })));
    const length = Number(await conn.send("XLEN", ["emq:{ev-gap}:events"]));
    assert.ok(length < 205, `the trim ran (${length} entries left of 205)`);
    events.resume();
    await until("the entries left", () => got.all.length === 5 + length, 10_000);
    await events.close();
    assert.equal(got.gaps.length, 1);
    const [gap] = got.gaps;
    assert.equal(gap!.exact, true);
    assert.equal(gap!.missed + length, 200, "missed + delivered = written while paused");
    assert.equal(gap!.after, got.all[4]!.eventId);
    assert.equal(gap!.resumedAt, got.all[5]!.eventId);
  });

  test("a reader resumed behind the trim reports at most how much it missed, then follows exactly", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-resume", conn);
    await q.setEvents({ maxLen: 10 });
    const first = new QueueEvents("ev-resume", conn, { lastEventId: "0" });
    const early = record(first);
    await q.add("one");
    await until("the first event", () => early.all.length === 1, 10_000);
    await first.close();
    await q.addBulk(Array.from({ length: 300 }, (_, i) => ({ payload: `p${i}` })));
    const resumed = new QueueEvents("ev-resume", conn, { lastEventId: first.lastEventId });
    const got = record(resumed);
    const length = Number(await conn.send("XLEN", ["emq:{ev-resume}:events"]));
    await until("the entries left", () => got.all.length === length, 10_000);
    assert.equal(got.gaps.length, 1);
    assert.equal(got.gaps[0]!.exact, false);
    assert.ok(got.gaps[0]!.missed >= 300 - length, `at most ${got.gaps[0]!.missed}`);
    // Now it knows where it is: a later gap is exact.
    resumed.pause();
    await q.addBulk(Array.from({ length: 300 }, (_, i) => ({ payload: `q${i}` })));
    const left = Number(await conn.send("XLEN", ["emq:{ev-resume}:events"]));
    resumed.resume();
    await until("the second gap", () => got.gaps.length === 2, 10_000);
    await until("the entries left after it", () => got.all.length === length + left, 10_000);
    await resumed.close();
    assert.equal(got.gaps[1]!.exact, true);
    assert.equal(got.gaps[1]!.missed + left, 300);
  });

  test("a completion that leases the next job: one entry, its completed (with a small result), then the next active", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-next", conn);
    const events = new QueueEvents("ev-next", conn);
    const got = record(events);
    await events.ready;
    const a = await q.add({ n: 1 });
    const b = await q.add({ n: 2 });
    const worker = new Worker(
      q,
      (job) => ((job.data as { n: number }).n === 1 ? "small" : "x".repeat(2000)),
      {
        concurrency: 1,
        ...FAST,
      },
    );
    await until("two completed", () => (got.kinds.completed ?? 0) === 2, 10_000);
    await worker.close();
    await events.close();
    const mine = got.all.filter((e) => e.kind !== "added");
    assert.deepEqual(
      mine.map((e) => [e.kind, e.jobId, e.attempt]),
      [
        ["active", a.id, 1],
        ["completed", a.id, 1],
        ["active", b.id, 1],
        ["completed", b.id, 1],
      ],
    );
    assert.equal(mine[1]!.eventId, mine[2]!.eventId, "the completion and the next lease share one entry");
    assert.equal(mine[1]!.result?.toString(), "small", "a string result is stored as its text");
    assert.equal(mine[3]!.result, undefined, "a result over 1 KiB is not on the entry");
    const entries = Number(await conn.send("XLEN", ["emq:{ev-next}:events"]));
    assert.equal(entries, 5, "2 added, 1 active, the fused completion, the last completion");
  });

  test("typed events: delayed, promoted, failed with its reason, retrying with its delay, dead, progress data", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-typed", conn);
    const events = new QueueEvents("ev-typed", conn);
    const got = record(events);
    const failed: BusEvent[] = [];
    events.on("failed", (e) => failed.push(e));
    await events.ready;
    const { id } = await q.add("p", { delay: 20, maxAttempts: 2 });
    const worker = new Worker(
      q,
      async (job) => {
        await job.progress({ step: job.attempts });
        throw new Error(`boom ${"x".repeat(300)}`);
      },
      { ...FAST, backoff: { type: "fixed", delayMs: 30 } },
    );
    await until("the dead event", () => (got.kinds.dead ?? 0) === 1, 10_000);
    await worker.close();
    await events.close();
    const kinds = got.all.map((e) => e.kind);
    assert.deepEqual(kinds, [
      "delayed",
      "promoted",
      "active",
      "progress",
      "failed",
      "retrying",
      "promoted",
      "active",
      "progress",
      "failed",
      "dead",
    ]);
    assert.ok(got.all.every((e) => e.jobId === id));
    assert.equal(got.all[0]!.delay, 20);
    assert.equal(got.all[3]!.data?.toString(), JSON.stringify({ step: 1 }));
    assert.equal(failed.length, 2);
    assert.equal(failed[0]!.attempt, 1);
    assert.equal(failed[0]!.reason, `Error: boom ${"x".repeat(300)}`.slice(0, 200));
    assert.equal(got.all[5]!.delay, 30);
    assert.equal(got.all[10]!.reason, failed[1]!.reason);
  });

  test("the bus switched off writes nothing; paused and resumed are queue events", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-off", conn);
    const events = new QueueEvents("ev-off", conn);
    const got = record(events);
    await events.ready;
    await q.pause();
    await q.resume();
    await until("paused, resumed", () => got.all.length === 2, 10_000);
    assert.deepEqual(
      got.all.map((e) => [e.kind, e.jobId]),
      [
        ["paused", undefined],
        ["resumed", undefined],
      ],
    );
    await q.setEvents({ maxLen: 0 });
    await q.add("silent");
    await q.pause();
    await new Promise((r) => setTimeout(r, 100));
    await events.close();
    assert.equal(got.all.length, 2);
  });

  test("a listener that throws is reported; the reader goes on", async () => {
    const { conn } = ctx();
    const q = new Queue("ev-throw", conn);
    const events = new QueueEvents("ev-throw", conn);
    const got = record(events);
    events.on("added", () => {
      throw new Error("listener bug");
    });
    await events.ready;
    await q.add("a");
    await q.add("b");
    await until("both events", () => got.all.length === 2, 10_000);
    await events.close();
    assert.equal(got.errors.length, 2);
    assert.match(String(got.errors[0]), /listener bug/);
  });
});

describe("QueueEvents on a connection that fails", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({});
  });
  after(async () => server.stop());

  test("a cut connection: the reader reconnects and goes on from its last id, nothing lost", async () => {
    const proxy = await startProxy({ targetPort: server.port });
    const direct = await connect({ port: server.port });
    const viaProxy = await connect({ port: proxy.port });
    const q = new Queue("ev-cut", direct);
    const events = new QueueEvents("ev-cut", viaProxy, { blockMs: 200 });
    const got = record(events);
    await events.ready;
    await q.add("before");
    await until("the first event", () => got.all.length === 1, 10_000);
    proxy.cut();
    for (let i = 0; i < 20; i++) await q.add(`during ${i}`);
    await until("every event", () => got.all.length === 21, 10_000);
    await events.close();
    await viaProxy.close();
    await direct.close();
    await proxy.close();
    assert.deepEqual(got.gaps, []);
    assert.equal(new Set(got.all.map((e) => e.eventId)).size, 21, "none twice");
  });

  test("the watchdog frees a read the server never answers, and the reader goes on", async () => {
    const proxy = await startProxy({ targetPort: server.port });
    const direct = await connect({ port: server.port });
    const viaProxy = await connect({ port: proxy.port });
    const q = new Queue("ev-dog", direct);
    const events = new QueueEvents("ev-dog", viaProxy, { blockMs: 100, watchdogMs: 300 });
    const got = record(events);
    await events.ready;
    // Nothing the reader sends reaches the server now (a half-open socket, as the reader sees it).
    proxy.hold();
    for (let i = 0; i < 5; i++) await q.add(`held ${i}`);
    await until("the watchdog", () => got.errors.some((e) => e instanceof WatchdogError), 10_000);
    proxy.release();
    await until("every event after the release", () => got.all.length === 5, 20_000);
    await events.close();
    await viaProxy.close();
    await direct.close();
    await proxy.close();
    assert.deepEqual(got.gaps, []);
  });
});

/** Stream ids in order. */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split("-").map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split("-").map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

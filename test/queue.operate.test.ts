/**
 * The operator API on both wires: `getJobs` (each state's order, paging, laned merges),
 * `promote(id)`, `clean`, `drain`, `obliterate` — what they delete and keep, their events, their
 * typed refusals (nothing written) — and on a laned queue, every lane.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { complete, claim, fail } from "../src/protocol.js";
import {
  InvalidArgumentError,
  JobNotFoundError,
  JobNotScheduledError,
  Queue,
  QueueActiveError,
} from "../src/index.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

const failDead = (q: string, id: string, token: number, conn: Parameters<typeof fail>[0]) =>
  fail(conn, q, id, token, "boom", { backoffMs: 0, maxAttempts: 1, keep: 100 });

forEachWire("queue operations", (ctx) => {
  test("getJobs: pending in claim order, scheduled by due time, active by deadline, finished newest first", async () => {
    const { conn } = ctx();
    const q = new Queue("ops", conn);
    const a = await q.add("a", { priority: 5 });
    const b = await q.add("b", { priority: -1 });
    const c = await q.add("c");
    const late = await q.add("late", { delay: 90_000 });
    const soon = await q.add("soon", { delay: 60_000 });
    assert.deepEqual(
      (await q.getJobs("pending")).map((j) => j.id),
      [b.id, c.id, a.id],
    );
    assert.deepEqual(
      (await q.getJobs("scheduled")).map((j) => j.id),
      [soon.id, late.id],
    );
    const first = await claim(conn, "ops", 60_000); // b
    const second = await claim(conn, "ops", 30_000); // c: the sooner deadline
    assert.deepEqual(
      (await q.getJobs("active")).map((j) => j.id),
      [second!.id, first!.id],
    );
    await complete(conn, "ops", first!.id, first!.attempts, "r1", 100);
    await new Promise((r) => setTimeout(r, 3));
    await complete(conn, "ops", second!.id, second!.attempts, "r2", 100);
    const done = await q.getJobs("completed");
    assert.deepEqual(
      done.map((j) => j.id),
      [second!.id, first!.id],
    );
    assert.equal(done[0]!.result?.toString(), "r2");
    assert.equal(done[0]!.state, "completed");
    assert.ok(done[0]!.score >= done[1]!.score);
    const third = await claim(conn, "ops", 30_000);
    await failDead("ops", third!.id, third!.attempts, conn);
    const dead = await q.getJobs("dead");
    assert.deepEqual(
      dead.map((j) => [j.id, j.error]),
      [[a.id, "boom"]],
    );
  });

  test("getJobs pages with offset and limit, and refuses bad input by name", async () => {
    const { conn } = ctx();
    const q = new Queue("paged", conn);
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push((await q.add(`p${i}`)).id);
    assert.deepEqual(
      (await q.getJobs("pending", { offset: 2, limit: 3 })).map((j) => j.id),
      ids.slice(2, 5),
    );
    assert.deepEqual(
      (await q.getJobs("pending", { offset: 6, limit: 3 })).map((j) => j.id),
      ids.slice(6),
    );
    assert.deepEqual(await q.getJobs("pending", { offset: 10 }), []);
    await assert.rejects(
      q.getJobs("sleeping" as never),
      (e: Error) => e instanceof InvalidArgumentError && /state/.test(e.message),
    );
    await assert.rejects(q.getJobs("pending", { limit: 0 }), /limit: must be an integer from 1 to 1000/);
    await assert.rejects(q.getJobs("pending", { limit: 1001 }), InvalidArgumentError);
    await assert.rejects(q.getJobs("pending", { offset: -1 }), /offset: must be a non-negative integer/);
  });

  test("promote(id) runs a scheduled job now; other states and unknown ids are typed refusals", async () => {
    const { conn, server } = ctx();
    const q = new Queue("promo", conn);
    const later = await q.add("x", { delay: 60_000, priority: 3 });
    await q.promote(later.id);
    assert.deepEqual(
      (await q.getJobs("pending")).map((j) => [j.id, j.score]),
      [[later.id, 3]],
    );
    assert.equal((await q.getJob(later.id))!.state, "pending");
    const before = await dumpQueue(server, "promo");
    await assert.rejects(
      q.promote(later.id),
      (e: Error) =>
        e instanceof JobNotScheduledError &&
        e.message === `promote(${later.id}): job ${later.id} is not scheduled (it is pending)` &&
        e.reply === "ERR EMQ.EXPEDITE job is not scheduled",
    );
    await assert.rejects(q.promote("JOB00000000009"), JobNotFoundError);
    await assert.rejects(q.promote("nope"), (e: Error) => /id/.test(e.message));
    assert.deepEqual(await dumpQueue(server, "promo"), before);
    const entries = (await server.cli("XRANGE", "emq:{promo}:events", "-", "+")) as [string, string[]][];
    assert.deepEqual(entries.at(-1)![1], ["event", "promoted", "id", later.id, "attempt", "0"]);
  });

  test("clean deletes finished jobs older than the grace, up to a limit, in batches", async () => {
    const { conn, server } = ctx();
    const q = new Queue("tidy", conn);
    const ids = [];
    for (let i = 0; i < 5; i++) {
      const { id } = await q.add(`j${i}`);
      const job = await claim(conn, "tidy", 30_000);
      await complete(conn, "tidy", job!.id, job!.attempts, "ok", 100);
      ids.push(id);
    }
    assert.equal(await q.clean("completed", { olderThanMs: 3_600_000 }), 0);
    assert.equal(await q.clean("dead"), 0);
    assert.equal(await q.clean("completed", { limit: 2 }), 2);
    assert.deepEqual(
      (await q.getJobs("completed")).map((j) => j.id),
      ids.slice(2).reverse(),
    );
    assert.equal(await q.clean("completed"), 3);
    assert.equal((await q.counts()).completed, 0);
    assert.equal(await server.cli("EXISTS", `emq:{tidy}:job:${ids[0]}`), 0);
    await assert.rejects(q.clean("pending" as never), /state: must be "completed" or "dead"/);
    await assert.rejects(q.clean("dead", { olderThanMs: -1 }), /olderThanMs/);
    await assert.rejects(q.clean("dead", { limit: 0 }), /limit: must be a positive integer/);
  });

  test("drain deletes pending and scheduled jobs, not the active one, over many batches", async () => {
    const { conn, server } = ctx();
    const q = new Queue("sink", conn);
    await q.add("running");
    const running = await claim(conn, "sink", 30_000);
    await q.addBulk(
      Array.from({ length: 2500 }, (_, i) => ({
        payload: `p${i}`,
        opts: i % 5 === 0 ? { delay: 60_000 } : {},
      })),
    );
    assert.equal(await q.drain(), 2500);
    const counts = await q.counts();
    assert.deepEqual([counts.pending, counts.scheduled, counts.active], [0, 0, 1]);
    await complete(conn, "sink", running!.id, running!.attempts, "ok", 10);
    const entries = (await server.cli("XRANGE", "emq:{sink}:events", "-", "+")) as [string, string[]][];
    const drained = entries.filter(([, f]) => f[1] === "drained").map(([, f]) => f[3]);
    assert.deepEqual(drained, ["1000", "1000", "500"]);
  });

  test("obliterate refuses while a job is active (nothing written), force deletes every key", async () => {
    const { conn, server } = ctx();
    const q = new Queue("gone", conn);
    await q.add("a");
    await q.add("b", { delay: 60_000 });
    await q.add("c");
    const active = await claim(conn, "gone", 30_000);
    await q.setEvents({ maxLen: 50 });
    const before = await dumpQueue(server, "gone", { events: true });
    await assert.rejects(
      q.obliterate(),
      (e: Error) =>
        e instanceof QueueActiveError && /1 active job/.test(e.message) && /force/.test(e.message),
    );
    assert.deepEqual(await dumpQueue(server, "gone", { events: true }), before);
    assert.equal(await q.obliterate({ force: true }), 3);
    assert.deepEqual(await server.cli("KEYS", "emq:{gone}:*"), []);
    await assert.rejects(complete(conn, "gone", active!.id, active!.attempts, "late", 10), JobNotFoundError);
    assert.equal(await q.obliterate(), 0);
    await assert.rejects(q.obliterate({ force: "yes" as never }), /force: must be a boolean/);
  });

  test("obliterate of a large queue goes in batches and leaves nothing", async () => {
    const { conn, server } = ctx();
    const q = new Queue("big", conn);
    await q.addBulk(Array.from({ length: 2300 }, (_, i) => ({ payload: `p${i}` })));
    await q.pause();
    assert.equal(await q.obliterate(), 2300);
    assert.deepEqual(await server.cli("KEYS", "emq:{big}:*"), []);
  });

  test("a laned queue: getJobs merges the lanes in order, the bulk actions act on every lane", async () => {
    const { conn, server } = ctx();
    const q = new Queue("wide", conn, { lanes: 4 });
    const added = [];
    for (let i = 0; i < 12; i++) added.push((await q.add(`w${i}`)).id);
    const page = await q.getJobs("pending", { offset: 3, limit: 5 });
    assert.deepEqual(
      page.map((j) => j.id),
      added.slice(3, 8),
    );
    assert.equal(new Set(page.map((j) => j.lane)).size > 1, true);
    const delayed = await q.add("d", { delay: 60_000 });
    await q.promote(delayed.id);
    assert.equal((await q.getJob(delayed.id))!.state, "pending");
    assert.equal(await q.drain(), 13);
    await q.add("again");
    assert.equal(await q.obliterate(), 1);
    assert.deepEqual(await server.cli("KEYS", "emq:{wide*"), []);
  });
});

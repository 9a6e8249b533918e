/**
 * Retention by age as well as count, both wires: a Worker's `keepCompleted` / `keepDead` as
 * `{ count?, age? }` — its housekeeping deletes the jobs (ids and rows) that finished longer than
 * `age` ago through `CLEAN` (one `cleaned` event per call, 1,000 ids at most per call, called
 * again while a call was full), keeps the newer ones, and keeps the count bound beside the age.
 * echomq/bullmq's Worker `removeOnComplete` / `removeOnFail: { age, count }` (seconds) map to it.
 * Bad values are refused naming `keepCompleted.age` etc., nothing written.
 *
 * "Older" is made exact: a finished job's score in `done` / `dead` (its finish time, server ms)
 * is moved back by hours, so which jobs a sweep deletes does not depend on the machine's speed;
 * one test waits for the real clock with a short age.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Worker as BullWorker, Queue as BullQueue } from "../src/bullmq.js";
import { InvalidArgumentError, Queue, Worker, type WorkerOptions } from "../src/index.js";
import { cleaned, finished, finishedAgo } from "./support/retention.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };
const HOUR = 3_600_000;

/** Runs `jobs` on a worker with `opts` until `settled` of them are finished, then closes it. */
async function runAll(q: Queue, opts: WorkerOptions, settled: number): Promise<void> {
  const w = new Worker(
    q,
    (job) => {
      if (job.text() === "fail") throw new Error("no");
    },
    { ...quiet, ...opts },
  );
  try {
    await until(
      `${settled} finished`,
      async () => {
        const c = await q.counts();
        return c.completed + c.dead === settled;
      },
      120_000,
    );
  } finally {
    await w.close();
  }
}

forEachWire("retention by age", (ctx) => {
  test("jobs finished longer ago than the age are deleted with their rows; newer ones stay", async () => {
    const { conn } = ctx();
    const q = new Queue("ret-age", conn);
    const ok = await q.addBulk(["a", "b", "c", "d", "e"].map((payload) => ({ payload })));
    const bad = await q.addBulk(
      ["fail", "fail", "fail"].map((payload) => ({ payload, opts: { maxAttempts: 1 } })),
    );
    await runAll(q, {}, 8);
    const [oldOk, newOk] = [ok.slice(0, 2).map((j) => j.id), ok.slice(2).map((j) => j.id)];
    const [oldBad, newBad] = [bad.slice(0, 1).map((j) => j.id), bad.slice(1).map((j) => j.id)];
    await finishedAgo(conn, "ret-age", "done", oldOk, 2 * HOUR);
    await finishedAgo(conn, "ret-age", "dead", oldBad, 2 * HOUR);
    // Its first sweep runs when it starts: one hour is the bound.
    const w = new Worker(q, () => {}, { ...quiet, keepCompleted: { age: HOUR }, keepDead: { age: HOUR } });
    try {
      await until("the old ones deleted", async () => {
        const c = await q.counts();
        return c.completed === 3 && c.dead === 2;
      });
    } finally {
      await w.close();
    }
    assert.deepEqual((await finished(conn, "ret-age", "done")).sort(), [...newOk].sort());
    assert.deepEqual((await finished(conn, "ret-age", "dead")).sort(), [...newBad].sort());
    for (const id of [...oldOk, ...oldBad]) assert.equal(await q.getJob(id), null, `${id}'s row deleted`);
    for (const id of [...newOk, ...newBad]) assert.ok(await q.getJob(id), `${id}'s row kept`);
    assert.deepEqual(await cleaned(conn, "ret-age"), ["completed:2", "dead:1"]);
  });

  test("with a short age, the worker's housekeeping deletes them as they age (the real clock)", async () => {
    const { conn } = ctx();
    const q = new Queue("ret-clock", conn);
    const jobs = await q.addBulk([
      { payload: "a" },
      { payload: "b" },
      { payload: "fail", opts: { maxAttempts: 1 } },
    ]);
    const w = new Worker(
      q,
      (job) => {
        if (job.text() === "fail") throw new Error("no");
      },
      { ...quiet, keepCompleted: { age: 1500 }, keepDead: { age: 1500 } },
    );
    try {
      // Swept every second (min(age / 2, 60 s), at least 1 s): gone some seconds after finishing.
      await until(
        "every job finished and deleted",
        async () => (await cleaned(conn, "ret-clock")).length > 0 && (await q.counts()).completed === 0,
        20_000,
      );
      await until("the dead one deleted", async () => (await q.counts()).dead === 0, 20_000);
    } finally {
      await w.close();
    }
    for (const { id } of jobs) assert.equal(await q.getJob(id), null);
    const events = await cleaned(conn, "ret-clock");
    const sum = (state: string) =>
      events.filter((e) => e.startsWith(`${state}:`)).reduce((n, e) => n + Number(e.split(":")[1]), 0);
    assert.deepEqual([sum("completed"), sum("dead")], [2, 1], events.join(" "));
  });

  test("count and age together: the count trims at completion, the age sweeps what is left", async () => {
    const { conn } = ctx();
    const q = new Queue("ret-both", conn);
    const ids: string[] = [];
    for (const payload of ["a", "b", "c", "d", "e"]) ids.push((await q.add(payload)).id);
    const opts = { keepCompleted: { count: 2, age: HOUR }, concurrency: 1 };
    await runAll(q, opts, 2); // `completed` reads 2 once the last completion trimmed the rest
    await until("all five ran", async () => (await q.counts()).pending === 0);
    const kept = await finished(conn, "ret-both", "done");
    assert.equal(kept.length, 2);
    await finishedAgo(conn, "ret-both", "done", [kept[0]!], 2 * HOUR);
    const w = new Worker(q, () => {}, { ...quiet, ...opts });
    try {
      await until("the old one of the two deleted", async () => (await q.counts()).completed === 1);
    } finally {
      await w.close();
    }
    assert.deepEqual(await finished(conn, "ret-both", "done"), [kept[1]]);
    assert.deepEqual(await cleaned(conn, "ret-both"), ["completed:1"]);
  });

  test("over 1,000 old jobs: CLEAN deletes 1,000 per call, called again while a call was full", async () => {
    const { conn } = ctx();
    const q = new Queue("ret-many", conn);
    await q.addBulk(Array.from({ length: 1005 }, (_, i) => ({ payload: `j${i}` })));
    await runAll(q, { concurrency: 50, keepCompleted: 5000 }, 1005);
    await finishedAgo(conn, "ret-many", "done", await finished(conn, "ret-many", "done"), 2 * HOUR);
    const w = new Worker(q, () => {}, { ...quiet, keepCompleted: { count: 5000, age: HOUR } });
    try {
      await until("every old job deleted", async () => (await q.counts()).completed === 0, 60_000);
    } finally {
      await w.close();
    }
    assert.deepEqual(await cleaned(conn, "ret-many"), ["completed:1000", "completed:5"]);
  });

  test("echomq/bullmq: the Worker's removeOnComplete / removeOnFail { age } are seconds", async () => {
    const { conn } = ctx();
    const q = new Queue("ret-bull", conn);
    const ids: string[] = [];
    for (const payload of ["a", "b", "c"]) ids.push((await q.add(payload)).id);
    await runAll(q, {}, 3);
    // 2 h and 30 min ago: an age of 3,600 read as ms would delete both.
    await finishedAgo(conn, "ret-bull", "done", [ids[0]!], 2 * HOUR);
    await finishedAgo(conn, "ret-bull", "done", [ids[1]!], HOUR / 2);
    const bq = new BullQueue("ret-bull", { connection: conn });
    const w = new BullWorker("ret-bull", async () => "r", {
      connection: conn,
      removeOnComplete: { age: 3600, count: 100 },
      removeOnFail: { age: 3600 },
    });
    try {
      await until("the 2-hour-old one deleted", async () => (await q.counts()).completed === 2);
    } finally {
      await w.close();
      await bq.close();
    }
    assert.deepEqual((await finished(conn, "ret-bull", "done")).sort(), [ids[1], ids[2]].sort());
    assert.deepEqual(await cleaned(conn, "ret-bull"), ["completed:1"]);
  });

  test("bad retention options are refused by name, exact text, nothing written", async () => {
    const { conn, server } = ctx();
    const q = new Queue("ret-bad", conn);
    const before = await server.cli("DBSIZE");
    const cases: [WorkerOptions, string, string][] = [
      [
        { keepCompleted: { age: 0 } },
        "keepCompleted.age",
        "must be an integer from 1 to 999999999999999, got 0",
      ],
      [{ keepDead: { age: 1.5 } }, "keepDead.age", "must be an integer from 1 to 999999999999999, got 1.5"],
      [
        { keepDead: { count: -1, age: 5 } },
        "keepDead.count",
        "must be an integer from 0 to 999999999999999, got -1",
      ],
      [{ keepCompleted: { age: "1h" } as never }, "keepCompleted.age", 'must be a number, got string "1h"'],
      [
        { keepCompleted: { ages: 5 } as never },
        "keepCompleted.ages",
        'keepCompleted takes no option "ages": did you mean age?',
      ],
      [
        { keepDead: { count: 1, ttl: 5 } as never },
        "keepDead.ttl",
        'keepDead takes no option "ttl"; it takes count, age',
      ],
      [
        { keepCompleted: {} },
        "keepCompleted",
        "must give count, age (ms) or both, e.g. { count: 1000, age: 86400000 }",
      ],
      [{ keepDead: "5" as never }, "keepDead", 'must be a number or an object, got string "5"'],
    ];
    for (const [opts, argument, says] of cases) {
      assert.throws(
        () => new Worker(q, () => {}, opts),
        (e: unknown) =>
          e instanceof InvalidArgumentError &&
          e.argument === argument &&
          e.message === `invalid ${argument}: ${says}`,
        JSON.stringify(opts),
      );
    }
    const bull: [unknown, string, string][] = [
      [
        { removeOnComplete: { age: 0 } },
        "removeOnComplete.age",
        "must be a positive number of seconds, got 0",
      ],
      [{ removeOnFail: { age: "1d" } }, "removeOnFail.age", 'must be a number, got string "1d"'],
      [
        { removeOnFail: { age: 5, max: 3 } },
        "removeOnFail.max",
        'removeOnFail takes no option "max"; it takes count, age',
      ],
      [
        { removeOnComplete: { count: 1.5 } },
        "keepCompleted.count",
        "must be an integer from 0 to 999999999999999, got 1.5",
      ],
    ];
    for (const [opts, argument, says] of bull) {
      assert.throws(
        () =>
          new BullWorker("ret-bad", async () => {}, {
            connection: conn,
            autorun: false,
            ...(opts as object),
          }),
        (e: unknown) =>
          e instanceof InvalidArgumentError &&
          e.argument === argument &&
          e.message === `invalid ${argument}: ${says}`,
        JSON.stringify(opts),
      );
    }
    assert.equal(await server.cli("DBSIZE"), before, "nothing written");
  });
});

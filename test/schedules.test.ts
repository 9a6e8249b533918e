/**
 * Schedules on both wires, with real servers and workers: the record and its listing, the same
 * call again (unchanged) and a new spec (replaced), one job per instant with no gaps, startAt /
 * endAt / limit, unschedule, the missed-instant policies after downtime, the job row FIRE writes,
 * and bad specs refused with typed errors naming the option, nothing written.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Connection, InvalidArgumentError, type Job, Queue, Worker } from "../src/index.js";
import { instantId } from "../src/schedules/options.js";
import { until } from "./support/until.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Workers on `queue` that record every job they run. */
async function workers(
  conn: Connection,
  queue: Queue,
  n = 1,
): Promise<{ jobs: Job[]; close: () => Promise<void> }> {
  const jobs: Job[] = [];
  const all = Array.from(
    { length: n },
    () =>
      new Worker(
        queue,
        async (job) => {
          jobs.push(job);
        },
        { concurrency: 2 },
      ),
  );
  await Promise.all(all.map((w) => w.ready));
  void conn;
  return { jobs, close: async () => void (await Promise.all(all.map((w) => w.close()))) };
}

/** Waits until every job the schedule fired has run: none pending, scheduled or active. */
async function drained(queue: Queue): Promise<void> {
  await until(
    `every fired job of ${queue.name} ran`,
    async () => {
      const c = await queue.counts();
      return c.pending === 0 && c.scheduled === 0 && c.active === 0;
    },
    10_000,
  );
}

/** The instants of the ids in `jobs`, sorted, as offsets from `first` in periods of `everyMs`. */
function steps(queue: string, name: string, jobs: Job[], first: number, everyMs: number): number[] {
  const byId = new Map<string, number>();
  for (let k = 0; k < 10_000; k++) byId.set(instantId(queue, name, first + k * everyMs), k);
  return jobs.map((j) => byId.get(j.id) ?? -1).sort((a, b) => a - b);
}

forEachWire("schedules", (ctx) => {
  test("schedule: the record, its listing; the same call is unchanged; a new spec replaces it", async () => {
    const { conn } = ctx();
    const q = new Queue("sched-a", conn);
    const first = await q.schedule("nightly", {
      cron: "0 3 * * *",
      tz: "Europe/Berlin",
      payload: "report",
      opts: { priority: 2, maxAttempts: 4, timeoutMs: 60_000 },
      limit: 30,
    });
    assert.equal(first.outcome, "created");
    assert.equal(new Date(first.next).getUTCMinutes(), 0);
    const again = await q.schedule("nightly", {
      cron: "0 3 * * *",
      tz: "Europe/Berlin",
      payload: "report",
      opts: { priority: 2, maxAttempts: 4, timeoutMs: 60_000 },
      limit: 30,
    });
    assert.deepEqual(again, { ...first, outcome: "unchanged" });
    await q.schedule("often", { everyMs: 60_000, payload: Buffer.from([0, 1, 2]) });
    const list = await q.schedules();
    assert.deepEqual(
      list.map((s) => s.name),
      ["often", "nightly"],
    );
    const nightly = list[1]!;
    assert.equal(nightly.next, first.next);
    assert.equal(nightly.fired, 0);
    assert.deepEqual(nightly.spec, {
      cron: "0 3 * * *",
      tz: "Europe/Berlin",
      limit: 30,
      missed: "skip",
      graceMs: 5000,
    });
    assert.equal(nightly.payload.toString(), "report");
    assert.deepEqual(nightly.opts, { priority: 2, maxAttempts: 4, timeoutMs: 60_000 });
    assert.deepEqual([...list[0]!.payload], [0, 1, 2]);
    const replaced = await q.schedule("nightly", {
      cron: "0 4 * * *",
      tz: "Europe/Berlin",
      payload: "report",
    });
    assert.equal(replaced.outcome, "replaced");
    // an hour later in the day: 04:00 follows 03:00 by one hour, or (between the two, Berlin time)
    // today's 04:00 comes 23 hours before tomorrow's 03:00
    assert.equal((((replaced.next - first.next) % 86_400_000) + 86_400_000) % 86_400_000, 3_600_000);
    assert.equal(await q.unschedule("nightly"), true);
    assert.equal(await q.unschedule("nightly"), false);
    assert.deepEqual(
      (await q.schedules()).map((s) => s.name),
      ["often"],
    );
  });

  test("a schedule's jobs take name and backoff: kept in the record, compared, written on each row", async () => {
    const { conn, server } = ctx();
    const q = new Queue("sched-named", conn);
    const opts = {
      name: "send-report é",
      backoff: { type: "exponential" as const, delayMs: 100, jitter: 0.5 },
    };
    const first = await q.schedule("r", { everyMs: 60_000, payload: "p", opts });
    assert.equal(first.outcome, "created");
    assert.equal((await q.schedule("r", { everyMs: 60_000, payload: "p", opts })).outcome, "unchanged");
    const [info] = await q.schedules();
    assert.deepEqual(info!.opts, {
      priority: 0,
      maxAttempts: 0,
      timeoutMs: 0,
      name: "send-report é",
      backoff: { type: "exponential", delayMs: 100, maxDelayMs: 999_999_999_999_999, jitter: 0.5 },
    });
    const record = `emq:{sched-named}:repeat:r`;
    const stored = (await dumpQueue(server, "sched-named"))[record] as Record<string, string>;
    assert.equal(stored.job_name, "send-report é");
    assert.equal(stored.backoff, "exponential:100:999999999999999:0.5");
    // another name, another backoff, or none: replaced
    for (const o of [{ ...opts, name: "other" }, { ...opts, backoff: 5 }, {}]) {
      assert.equal((await q.schedule("r", { everyMs: 60_000, payload: "p", opts: o })).outcome, "replaced");
      await q.schedule("r", { everyMs: 60_000, payload: "p", opts });
    }
    // a record written before schedules kept them (no job_name, no backoff) reads as without both
    await q.schedule("old", { everyMs: 60_000, payload: "p" });
    await server.cli("HDEL", "emq:{sched-named}:repeat:old", "job_name", "backoff");
    assert.equal((await q.schedule("old", { everyMs: 60_000, payload: "p" })).outcome, "unchanged");
    const old = (await q.schedules()).find((x) => x.name === "old")!;
    assert.deepEqual(old.opts, { priority: 0, maxAttempts: 0, timeoutMs: 0 });
    assert.equal(
      (await q.schedule("old", { everyMs: 60_000, payload: "p", opts: { name: "n" } })).outcome,
      "replaced",
    );
    // the jobs FIRE adds carry them: a schedule due now
    const w = await workers(conn, q);
    await q.schedule("now", { everyMs: 200, payload: "t", opts: { name: "tick", backoff: 250 } });
    await until("a fired job ran", () => w.jobs.length >= 1, 10_000);
    await q.unschedule("now");
    await sleep(300); // a FIRE in flight lands
    await w.close();
    const job = await q.getJob(w.jobs[0]!.id);
    assert.equal(job?.name, "tick");
    assert.deepEqual(job?.backoff, { type: "fixed", delayMs: 250 });
    const bad: [unknown, string][] = [
      [{ name: "a\tb" }, "opts.name"],
      [{ name: "" }, "opts.name"],
      [{ name: 7 }, "opts.name"],
      [{ backoff: -1 }, "opts.backoff"],
      [{ backoff: { type: "linear", delayMs: 1 } }, "opts.backoff.type"],
      [{ backoff: () => 1 }, "opts.backoff"],
    ];
    for (const [o, argument] of bad) {
      await assert.rejects(
        q.schedule("bad", { everyMs: 100, payload: "p", opts: o as never }),
        (err: unknown) => err instanceof InvalidArgumentError && err.argument === argument,
        JSON.stringify(o),
      );
    }
    assert.equal(
      (await q.schedules()).some((x) => x.name === "bad"),
      false,
    );
  });

  test("obliterate removes the queue's schedules with its jobs", async () => {
    const { conn, server } = ctx();
    const q = new Queue("sched-gone", conn);
    await q.schedule("a", { everyMs: 60_000, payload: "x" });
    await q.schedule("b", { cron: "0 3 * * *", payload: "y" });
    await q.add("job");
    assert.equal(await q.obliterate(), 1);
    assert.deepEqual(await q.schedules(), []);
    assert.deepEqual(await dumpQueue(server, "sched-gone"), {});
  });

  test("bad specs: a typed error naming the option, nothing written", async () => {
    const { conn, server } = ctx();
    const q = new Queue("sched-bad", conn);
    const bad: [unknown, unknown, string][] = [
      ["n", { cron: "0 61 * * *", payload: "p" }, "cron"],
      ["n", { cron: "* * * * *", everyMs: 100, payload: "p" }, "cron"],
      ["n", { everyMs: 0, payload: "p" }, "everyMs"],
      ["n", { everyMs: -100, payload: "p" }, "everyMs"],
      ["n", { cron: "0 3 * * *", tz: "Europe/Nowhere", payload: "p" }, "tz"],
      ["n", { everyMs: 100 }, "payload"],
      ["n", { everyMs: 100, payload: "p", endAt: 1000 }, "endAt"],
      ["n", { everyMs: 100, payload: "p", limit: -1 }, "limit"],
      ["", { everyMs: 100, payload: "p" }, "name"],
      ["a\nb", { everyMs: 100, payload: "p" }, "name"],
      [7, { everyMs: 100, payload: "p" }, "name"],
    ];
    for (const [name, options, argument] of bad) {
      await assert.rejects(
        q.schedule(name as string, options as never),
        (err: unknown) => err instanceof InvalidArgumentError && err.argument === argument,
        `${JSON.stringify(name)} ${JSON.stringify(options)}`,
      );
    }
    await assert.rejects(q.unschedule(""), { name: "InvalidArgumentError", argument: "name" });
    assert.deepEqual(await dumpQueue(server, "sched-bad"), {});
  });

  test("every 200 ms: one job per instant, no gaps, rows as ADD writes them", async () => {
    const { conn, server } = ctx();
    const q = new Queue("sched-every", conn);
    const w = await workers(conn, q, 2);
    const { next } = await q.schedule("tick", {
      everyMs: 200,
      payload: "t",
      opts: { priority: -3, maxAttempts: 2, timeoutMs: 1500 },
    });
    await until("10 jobs", () => w.jobs.length >= 10, 15_000);
    await q.unschedule("tick");
    await sleep(300); // a FIRE in flight lands
    await w.close();
    const got = steps("sched-every", "tick", w.jobs, next, 200);
    assert.deepEqual(
      got,
      got.map((_, k) => k),
      "consecutive instants from the first, each once",
    );
    const row = (await dumpQueue(server, "sched-every"))[`emq:{sched-every}:job:${w.jobs[0]!.id}`] as Record<
      string,
      string
    >;
    assert.equal(row.payload, "t");
    assert.equal(row.priority, "-3");
    assert.equal(row.max_attempts, "2");
    assert.equal(row.timeout, "1500");
  });

  test("limit: exactly that many jobs, then the schedule is gone", async () => {
    const { conn } = ctx();
    const q = new Queue("sched-limit", conn);
    const w = await workers(conn, q);
    await q.schedule("three", { everyMs: 100, payload: "x", limit: 3 });
    await until("the schedule ends", async () => (await q.schedules()).length === 0, 10_000);
    await drained(q);
    await w.close();
    assert.equal(w.jobs.length, 3);
  });

  test("startAt and endAt: no instant before the start or after the end; then the schedule is gone", async () => {
    const { conn } = ctx();
    const q = new Queue("sched-window", conn);
    const w = await workers(conn, q);
    const now = Date.now();
    const startAt = Math.ceil((now + 600) / 100) * 100 + 37; // off the period's grid
    const endAt = startAt + 450;
    const { next } = await q.schedule("window", { everyMs: 100, payload: "x", startAt, endAt });
    assert.equal(next, startAt);
    await until("the schedule ends", async () => (await q.schedules()).length === 0, 10_000);
    await drained(q);
    await w.close();
    assert.deepEqual(steps("sched-window", "window", w.jobs, startAt, 100), [0, 1, 2, 3, 4]);
  });

  test("unschedule: no job after it", async () => {
    const { conn } = ctx();
    const q = new Queue("sched-stop", conn);
    const w = await workers(conn, q);
    await q.schedule("s", { everyMs: 100, payload: "x" });
    await until("3 jobs", () => w.jobs.length >= 3, 10_000);
    assert.equal(await q.unschedule("s"), true);
    await sleep(200); // a FIRE already sent lands
    const count = w.jobs.length;
    await sleep(1000);
    await w.close();
    assert.equal(w.jobs.length, count);
  });

  test("missed skip: after 3 s with no worker, the instants older than the grace get no job", async () => {
    const { conn } = ctx();
    const q = new Queue("sched-skip", conn);
    const { next } = await q.schedule("s", { everyMs: 200, payload: "x", graceMs: 400 });
    await sleep(3000);
    const started = Date.now();
    const w = await workers(conn, q);
    await until("a job after the restart", () => w.jobs.length >= 4, 10_000);
    await w.close();
    const got = steps("sched-skip", "s", w.jobs, next, 200);
    // 15 instants passed during the downtime; at most the ones within 400 ms of the restart ran.
    const firstRun = got[0]!;
    assert.ok(next + firstRun * 200 >= started - 400 - 200, `first instant run: step ${firstRun}`);
    assert.ok(firstRun >= 10, `skipped the older instants (first step ${firstRun})`);
    assert.deepEqual(
      got,
      got.map((_, k) => firstRun + k),
      "after the skip, every instant once",
    );
  });

  test("missed catch-up: after 3 s with no worker, a job for every missed instant, in order", async () => {
    const { conn } = ctx();
    const q = new Queue("sched-catch", conn);
    const { next } = await q.schedule("s", { everyMs: 200, payload: "x", missed: "catch-up" });
    await sleep(3000);
    const w = await workers(conn, q);
    await until("the missed jobs", () => w.jobs.length >= 18, 10_000);
    await w.close();
    const got = steps("sched-catch", "s", w.jobs, next, 200);
    assert.deepEqual(
      got,
      got.map((_, k) => k),
      "every instant from the first",
    );
  });
});

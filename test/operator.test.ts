/**
 * What an operator sees, on both wires, through the built `echomq` and `Metrics`: a queue that
 * holds only a flow parent waiting for its children is listed with its waiting count (discovery,
 * `queues`, `status`, `metrics`); `pause` refuses a queue the server does not hold and writes
 * nothing, and reports the state truthfully; the queue latency counts from when the head became
 * ready, not from its creation; the counters are exported only where a source counts them — none
 * on a one-shot `echomq metrics`, the bus's on the dashboard's `/metrics`, for a worker of
 * another process.
 */
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { idTime, claim, fail, promote } from "../src/protocol.js";
import { FlowProducer, type Job, Metrics, Queue, Worker } from "../src/index.js";
import { listQueues } from "../src/admin.js";
import { assertBuilt, echomq, echomqJson, follow } from "./support/cli.js";
import { until } from "./support/until.js";
import { parseSamples } from "./support/prom.js";
import { forEachWire } from "./support/wires.js";
import { HeadReadiness } from "../src/observe/ready.js";

/** A text table's rows as objects keyed by its header's columns. */
function rows(table: string): Record<string, string>[] {
  const [head, ...body] = table.trim().split("\n");
  const columns = head!.trim().split(/\s+/);
  return body.map((line) =>
    Object.fromEntries(
      line
        .trim()
        .split(/\s+/)
        .map((v, i) => [columns[i], v]),
    ),
  );
}

interface Row {
  name: string;
  waiting: number;
  pending: number;
  paused: boolean;
}

forEachWire("what operators see", (ctx) => {
  before(assertBuilt);
  const env = () => ({ VALKEY_URL: `redis://127.0.0.1:${ctx().server.port}` });
  const run = (args: string[]) => echomq(args, env());
  const json = <T>(args: string[]) => echomqJson<T>(args, env());

  test("a queue holding only a waiting flow parent is listed, with its waiting count", async () => {
    const { conn } = ctx();
    await new FlowProducer(conn).add({
      queue: "reports",
      payload: "summary",
      children: [{ queue: "parts", payload: "p1" }],
    });
    assert.equal((await new Queue("reports", conn).counts()).waiting, 1, "the parent waits");

    const found = await listQueues(conn);
    assert.deepEqual(
      found.queues.map((q) => q.name),
      ["parts", "reports"],
    );

    const listed = await json<{ queues: Row[] }>(["queues"]);
    const reports = listed.queues.find((q) => q.name === "reports");
    assert.equal(reports?.waiting, 1, "queues --json");
    const status = await json<{ queues: Row[] }>(["status"]);
    assert.equal(status.queues.find((q) => q.name === "reports")?.waiting, 1, "status --json");

    const table = rows((await run(["queues"])).stdout);
    assert.equal(table.find((r) => r.queue === "reports")?.waiting, "1", "queues' waiting column");
    assert.equal(table.find((r) => r.queue === "parts")?.waiting, "0");
    const statusText = (await run(["status"])).stdout;
    const statusTable = statusText.slice(statusText.indexOf("queue "));
    assert.equal(rows(statusTable).find((r) => r.queue === "reports")?.waiting, "1", "status' column");

    const metrics = parseSamples((await run(["metrics"])).stdout);
    assert.equal(metrics.get('echomq_jobs{queue="reports",state="waiting"}'), 1);
  });

  test("pause of a queue the server does not hold: refused, naming it and the known ones; nothing written", async () => {
    const { conn, server } = ctx();
    await new Queue("real", conn).add("x");
    const before = Number(await server.cli("DBSIZE"));
    const ran = await run(["pause", "typo"]);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(
      ran.stderr,
      /^echomq: no queue "typo" on this server \(known queues: "real"\): --create pauses it before its first job/,
    );
    const resumed = await run(["resume", "typo"]);
    assert.equal(resumed.code, 1);
    assert.match(resumed.stderr, /no queue "typo" on this server \(known queues: "real"\)/);
    assert.equal(Number(await server.cli("DBSIZE")), before, "no key written");
    assert.equal(Number(await server.cli("EXISTS", "emq:{typo}:meta")), 0);

    assert.deepEqual(await json(["pause", "fresh", "--create"]), {
      queue: "fresh",
      paused: true,
      changed: true,
    });
    assert.equal((await new Queue("fresh", conn).counts()).paused, true);
  });

  test("pause --json reports the state: a paused queue paused again is paused, unchanged", async () => {
    await new Queue("held", ctx().conn).add("x");
    assert.deepEqual(await json(["pause", "held"]), { queue: "held", paused: true, changed: true });
    assert.deepEqual(await json(["pause", "held"]), { queue: "held", paused: true, changed: false });
    assert.match((await run(["pause", "held"])).stdout, /^held: already paused/);
    assert.deepEqual(await json(["resume", "held"]), { queue: "held", paused: false, changed: true });
    assert.deepEqual(await json(["resume", "held"]), { queue: "held", paused: false, changed: false });
  });

  test("latency counts from when the head became ready: a retried old job reads its time since promotion", async () => {
    const { conn } = ctx();
    const q = new Queue("lat", conn);
    const { id } = await q.add("old");
    await sleep(1500); // the job grows old
    const job = await claim(conn, "lat", 30_000);
    assert.equal(job?.id, id);
    assert.equal(
      await fail(conn, "lat", id, job!.attempts, "boom", { backoffMs: 50, maxAttempts: 3, keep: 10 }),
      "scheduled",
    );
    await sleep(100); // due
    const promotedFrom = Date.now();
    assert.equal(await promote(conn, "lat", 100), 1);
    const scrapedFrom = Date.now();
    const text = await new Metrics(conn, { queues: ["lat"] }).text();
    const scrapedTo = Date.now();
    const latency = parseSamples(text).get('echomq_queue_latency_seconds{queue="lat"}')!;
    const age = (scrapedFrom - idTime(id)) / 1000;
    assert.ok(latency < age, `latency ${latency} s is less than the job's age ${age} s`);
    assert.ok(
      latency <= (scrapedTo - promotedFrom + 1) / 1000,
      `latency ${latency} s is at most the time since its promotion (${(scrapedTo - promotedFrom) / 1000} s)`,
    );
  });

  test("the sampler's repeated reads stay exact: a head that left pending and came back reads its new ready time", async () => {
    const { conn } = ctx();
    const { id } = await new Queue("again", conn).add("old");
    await new Queue("again", conn).add("behind");
    await sleep(300);
    const readiness = new HeadReadiness();
    const first = await readiness.ageMs(conn, "again");
    assert.ok(first >= 300 - 5, `first read ${first} ms: ready since its creation`);
    const job = await claim(conn, "again", 30_000);
    assert.equal(job?.id, id);
    const failFrom = Date.now();
    await fail(conn, "again", id, job!.attempts, "x", { backoffMs: 0, maxAttempts: 3, keep: 10 });
    const second = await readiness.ageMs(conn, "again");
    const third = await readiness.ageMs(conn, "again");
    const to = Date.now();
    assert.ok(second <= to - failFrom + 1, `second read ${second} ms: since it came back`);
    assert.ok(third >= second && third <= to - failFrom + 1, `third read ${third} ms`);
  });

  test("counters: none on a one-shot `echomq metrics` (it has no past to count)", async () => {
    const { conn } = ctx();
    const q = new Queue("counted", conn);
    await q.add("warm");
    const oneShot = (await run(["metrics"])).stdout;
    assert.match(oneShot, /^# TYPE echomq_jobs gauge$/m);
    assert.doesNotMatch(oneShot, /_total|echomq_job_duration_seconds|echomq_job_wait_seconds/);
  });

  test("the dashboard's /metrics counts, from the bus, the jobs a worker of another process settled", async () => {
    const { conn } = ctx();
    const q = new Queue("counted", conn);
    await q.add("warm");
    const dash = follow(["dashboard", "--port", "0", "--json", "--url", env().VALKEY_URL]);
    try {
      await dash.until(() => dash.lines.length > 0, "the dashboard's url");
      const { url } = JSON.parse(dash.lines[0]!) as { url: string };
      const scrape = async () => parseSamples(await (await fetch(new URL("/metrics", url))).text());
      await until(
        "the dashboard's first sample",
        async () => (await scrape()).has('echomq_jobs{queue="counted",state="pending"}'),
        15_000,
      );
      await q.addBulk([{ payload: "ok" }, { payload: "fail-once" }, { payload: "ok" }]);
      const failedOnce = new Set<string>();
      const worker = new Worker(
        q,
        (j: Job) => {
          if (j.text() === "fail-once" && !failedOnce.has(j.id)) {
            failedOnce.add(j.id);
            throw new Error("once");
          }
        },
        { attempts: 2, backoff: () => 0, idleCheckMs: 50 },
      );
      try {
        await until("4 completed", async () => (await q.counts()).completed === 4, 15_000);
      } finally {
        await worker.close();
      }
      let last = new Map<string, number>();
      const completed = async () => {
        last = await scrape();
        return last.get('echomq_jobs_completed_total{queue="counted"}');
      };
      await until("the dashboard's counters", async () => (await completed()) === 4, 15_000).catch(() =>
        assert.fail(`completed_total: ${last.get('echomq_jobs_completed_total{queue="counted"}')}`),
      );
      assert.equal(last.get('echomq_attempts_failed_total{queue="counted"}'), 1);
    } finally {
      await dash.stop();
    }
  });
});

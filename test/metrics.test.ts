/**
 * Prometheus metrics on both wires: scraped over HTTP from a real server's state and a real
 * worker's outcomes, parsed from the text format, every family checked against what happened.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { InvalidArgumentError, type Job, Metrics, Queue, Worker } from "../src/index.js";
import { PACKAGE_VERSION } from "../src/metrics.js";
import { parseSamples } from "./support/prom.js";
import { forEachWire } from "./support/wires.js";

async function scrape(
  handler: http.RequestListener,
): Promise<{ type: string; samples: Map<string, number> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    return { type: res.headers.get("content-type") ?? "", samples: parseSamples(await res.text()) };
  } finally {
    server.close();
  }
}

forEachWire("Prometheus metrics", (ctx) => {
  test("server state per queue and this worker's outcomes, in the text format", async () => {
    const { conn, wire } = ctx();
    const q = new Queue("m1", conn);
    const idle = new Queue("m2", conn);
    const metrics = new Metrics(conn, { queues: ["m1", "m2"] });
    await q.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: i < 2 ? "fail" : "ok" })));
    await idle.add("waiting");
    await idle.add("later", { delay: 60_000 });
    await sleep(20); // the waiting job is at least this old
    const worker = new Worker(
      q,
      (job: Job) => {
        if (job.text() === "fail") throw new Error("no");
      },
      { attempts: 1, idleCheckMs: 50 },
    );
    metrics.observe(worker);
    await new Promise<void>((resolve) => {
      let settled = 0;
      const done = () => ++settled === 6 && resolve();
      worker.on("completed", done);
      worker.on("dead", done);
    });
    const { type, samples } = await scrape(metrics.handler());
    await worker.close();
    assert.match(type, /^text\/plain; version=0\.0\.4/);
    const at = (key: string) => samples.get(key);
    assert.equal(at('echomq_jobs{queue="m1",state="completed"}'), 4);
    assert.equal(at('echomq_jobs{queue="m1",state="dead"}'), 2);
    assert.equal(at('echomq_jobs{queue="m1",state="pending"}'), 0);
    assert.equal(at('echomq_jobs{queue="m2",state="pending"}'), 1);
    assert.equal(at('echomq_jobs{queue="m2",state="scheduled"}'), 1);
    assert.equal(at('echomq_jobs_completed_total{queue="m1"}'), 4);
    assert.equal(at('echomq_attempts_failed_total{queue="m1"}'), 2);
    assert.equal(at('echomq_jobs_dead_total{queue="m1"}'), 2);
    assert.equal(at('echomq_job_duration_seconds_count{queue="m1",outcome="completed"}'), 4);
    assert.equal(at('echomq_job_duration_seconds_count{queue="m1",outcome="failed"}'), 2);
    assert.equal(at('echomq_job_wait_seconds_count{queue="m1"}'), 6);
    assert.equal(at('echomq_queue_latency_seconds{queue="m1"}'), 0, "nothing waits in m1");
    assert.ok((at('echomq_queue_latency_seconds{queue="m2"}') ?? 0) >= 0.02, "m2's head has waited");
    assert.equal(at('echomq_workers{queue="m1"}'), 1, "the worker's wake subscription");
    assert.equal(at('echomq_workers{queue="m2"}'), 0);
    assert.equal(at('echomq_queue_paused{queue="m2"}'), 0);
    assert.equal(at(`echomq_build_info{wire="${wire}",version="0.1.0"}`), 1);
  });

  test("build_info reports this package's version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    assert.equal(PACKAGE_VERSION, pkg.version);
  });

  test("outcome families exist from observe(worker) on; a Metrics that counts from the bus refuses a worker", async () => {
    const { conn } = ctx();
    const metrics = new Metrics(conn, { queues: ["m3"] });
    assert.doesNotMatch(await metrics.text(), /_total|_seconds_bucket/, "no source, no family");
    const worker = new Worker(new Queue("m3", conn), () => undefined, { idleCheckMs: 50 });
    try {
      metrics.observe(worker);
      assert.match(await metrics.text(), /^# TYPE echomq_attempts_failed_total counter$/m);
      const counted = new Metrics(conn, {
        queues: ["m3"],
        counted: new Map([["m3", { completed: 2, failed: 1 }]]),
      });
      const text = await counted.text();
      assert.match(text, /^echomq_jobs_completed_total\{queue="m3"\} 2$/m);
      assert.match(text, /^echomq_attempts_failed_total\{queue="m3"\} 1$/m);
      assert.throws(
        () => counted.observe(worker),
        (err: unknown) =>
          err instanceof InvalidArgumentError &&
          /^invalid worker: cannot be observed by a Metrics made with `counted`/.test(err.message),
      );
    } finally {
      await worker.close();
    }
  });

  test("a queue name that breaks the rule is refused at construction", () => {
    assert.throws(() => new Metrics(ctx().conn, { queues: ["a{b"] }), /invalid queue name/);
  });
});

/**
 * The dashboard's server on both wires, over real HTTP against a real server: the JSON API the
 * page reads (queues found by the scan, counts, paging, a job's detail and timeline), the live
 * stream, `/metrics`, the token, read-only mode, and bad input answered with the status and text
 * that name it. The page itself is driven in Chromium by `dashboard.browser.test.ts`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startDashboard } from "../src/dashboard/server.js";
import { connect, type Job, Queue, Worker } from "../src/index.js";
import { newId } from "../src/protocol.js";
import { jobKey, queueKey } from "../src/keyspace.js";
import { startProxy } from "./support/proxy.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

async function get(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL(path, base), init);
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

const post = (base: string, path: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  get(base, path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

forEachWire("dashboard API", (ctx) => {
  test("queues with counts, a page of dead jobs newest first, a job's detail and timeline", async () => {
    const { conn } = ctx();
    const q = new Queue("dash-a", conn);
    await new Queue("dash-b", conn).add("other");
    const added = await q.addBulk(
      Array.from({ length: 7 }, (_, i) => ({ payload: i < 3 ? `bad-${i}` : `ok-${i}` })),
    );
    let settled = 0;
    const worker = new Worker(
      q,
      async (job: Job) => {
        settled++;
        await job.log(`ran ${job.text()}`);
        if (job.text().startsWith("bad")) throw new Error(`refused ${job.text()}`);
        return "fine";
      },
      { attempts: 1, idleCheckMs: 50 },
    );
    await until("7 jobs settled", () => settled === 7, 20_000);
    await worker.close();
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    try {
      const queues = await get(dash.url, "/api/queues");
      assert.equal(queues.status, 200);
      const names = queues.body.queues.map((x: { name: string }) => x.name);
      assert.deepEqual(names, ["dash-a", "dash-b"]);
      const a = queues.body.queues[0];
      assert.deepEqual([a.counts.pending, a.counts.active, a.counts.completed, a.counts.dead], [0, 0, 4, 3]);
      assert.equal(queues.body.queues[1].counts.pending, 1);

      const page = await get(dash.url, "/api/queues/dash-a/jobs?state=dead&limit=2");
      assert.equal(page.status, 200);
      assert.equal(page.body.total, 3);
      assert.equal(page.body.jobs.length, 2);
      const deadIds = added.slice(0, 3).map((r) => r.id);
      for (const job of page.body.jobs) assert.ok(deadIds.includes(job.id), `${job.id} is one of the dead`);
      const rest = await get(dash.url, "/api/queues/dash-a/jobs?state=dead&offset=2&limit=2");
      assert.equal(rest.body.jobs.length, 1);
      const all = [...page.body.jobs, ...rest.body.jobs].map((j: { id: string }) => j.id);
      assert.deepEqual(new Set(all), new Set(deadIds));

      const id = added[0]!.id;
      const detail = await get(dash.url, `/api/queues/dash-a/jobs/${id}`);
      assert.equal(detail.status, 200);
      const job = detail.body.job;
      assert.equal(job.state, "dead");
      assert.equal(job.payload.text, "bad-0");
      assert.equal(job.error, "Error: refused bad-0");
      assert.deepEqual(job.logs, ["ran bad-0"]);
      assert.deepEqual(
        job.timeline.map((e: { kind: string }) => e.kind),
        ["added", "active", "failed", "dead"],
      );
      const missing = await get(dash.url, `/api/queues/dash-a/jobs/${newId()}`);
      assert.equal(missing.status, 404);
      assert.match(missing.body.error, /^no job \S+ in queue dash-a$/);
    } finally {
      await dash.close();
    }
  });

  test("the live stream sends a snapshot per sample; throughput counted from the bus, every completion once", async () => {
    const { conn } = ctx();
    const q = new Queue("dash-live", conn);
    await q.add("seed");
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    const abort = new AbortController();
    let worker: Worker | undefined;
    try {
      const res = await fetch(new URL("/api/stream", dash.url), { signal: abort.signal });
      assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
      const reader = res.body!.getReader();
      let text = "";
      const snapshots = async function* () {
        for (;;) {
          const { value } = await reader.read();
          text += Buffer.from(value!).toString("utf8");
          const events = text.split("\n\n");
          text = events.pop()!;
          for (const e of events) {
            assert.ok(e.startsWith("event: snapshot\ndata: "), e.slice(0, 40));
            yield JSON.parse(e.slice("event: snapshot\ndata: ".length));
          }
        }
      };
      const live = (snap: { queues: { name: string }[] }) =>
        snap.queues.find((x) => x.name === "dash-live") as any;
      const stream = snapshots();
      assert.equal(live((await stream.next()).value).counts.pending, 1, "the first snapshot on connect");
      worker = new Worker(q, () => "done", { idleCheckMs: 50 });
      await q.addBulk(Array.from({ length: 50 }, () => ({ payload: "x" })));
      let last: any;
      let seen = 0;
      for await (const snap of stream) {
        seen++;
        last = live(snap);
        if (last.counts.completed === 51 && last.counted.completed === 51) break;
        assert.ok(seen < 400, `51 completions counted within 400 samples: ${JSON.stringify(last)}`);
      }
      assert.deepEqual(last.counted, { completed: 51, failed: 0 });
      assert.ok(
        last.completedPerSec.some((r: number | null) => r !== null && r > 0),
        "a sample saw completions per second",
      );
    } finally {
      abort.abort();
      await worker?.close();
      await dash.close();
    }
  });

  test("right after a retry, a page of dead jobs and its total agree: a job re-dying while the page is read is not counted ('1–8 of 9')", async () => {
    const { conn, server, wire } = ctx();
    const q = new Queue("dash-range", conn);
    const added = await q.addBulk(Array.from({ length: 9 }, (_, i) => ({ payload: `bad-${i}` })));
    const failing = () =>
      new Worker(
        q,
        async (job: Job) => {
          throw new Error(`refused ${job.text()}`);
        },
        { attempts: 1, idleCheckMs: 50 },
      );
    const dead = async () => Number(await server.cli("ZCARD", queueKey("dash-range", "dead")));
    let worker = failing();
    await until("9 jobs dead", async () => (await dead()) === 9, 20_000);
    await worker.close();
    // The dashboard reads through a proxy: the test can act between its reads of one request.
    const proxy = await startProxy({ targetPort: server.port });
    const viaProxy = await connect({ port: proxy.port, wire });
    const dash = await startDashboard(viaProxy, { port: 0, sampleMs: 100 });
    try {
      const retried = added[4]!.id;
      assert.deepEqual((await post(dash.url, `/api/queues/dash-range/jobs/${retried}/retry`)).body, {
        ok: true,
      });
      const held = await dead();
      assert.equal(held, 8, "the retry took one job out of dead");
      const rows = new Set(added.filter((r) => r.id !== retried).map((r) => jobKey("dash-range", r.id)));
      // The page's ids are read; its rows' reads (and all the dashboard sends after them) are held
      // while the retried job dies again, then forwarded: a total read after the page sees 9.
      const rowRead = proxy.holdFrom((a) => a[0]!.toUpperCase() === "HGETALL" && rows.has(a[1]!));
      const pending = get(dash.url, "/api/queues/dash-range/jobs?state=dead&limit=20");
      await rowRead;
      worker = failing();
      await until("the retried job dead again", async () => (await dead()) === 9, 20_000);
      await worker.close();
      proxy.release();
      const page = (await pending).body;
      const range = `${page.offset + 1}–${page.offset + page.jobs.length} of ${page.total}`;
      assert.equal(range, `1–${held} of ${held}`, "the page and its total are read at one moment");
      assert.ok(
        !page.jobs.some((j: { id: string }) => j.id === retried),
        "the page is the set as it was read",
      );

      const again = (await get(dash.url, "/api/queues/dash-range/jobs?state=dead&limit=20")).body;
      const now = await dead();
      assert.equal(now, 9);
      assert.deepEqual([again.jobs.length, again.total], [now, now]);
      assert.ok(again.jobs.some((j: { id: string }) => j.id === retried));
    } finally {
      proxy.release();
      await dash.close();
      await viaProxy.close();
      await proxy.close();
    }
  });

  test("actions: pause and resume, retry a dead job; bad input named, nothing written", async () => {
    const { conn } = ctx();
    const q = new Queue("dash-act", conn);
    const { id } = await q.add("once");
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    try {
      assert.deepEqual((await post(dash.url, "/api/queues/dash-act/pause")).body, { ok: true });
      assert.equal((await q.counts()).paused, true);
      assert.deepEqual((await post(dash.url, "/api/queues/dash-act/resume")).body, { ok: true });
      assert.equal((await q.counts()).paused, false);

      const badState = await get(dash.url, "/api/queues/dash-act/jobs?state=nope");
      assert.equal(badState.status, 400);
      assert.equal(
        badState.body.error,
        'state must be one of pending, scheduled, active, completed, dead, waiting, got "nope"',
      );
      const badLimit = await get(dash.url, "/api/queues/dash-act/jobs?limit=-1");
      assert.equal(badLimit.status, 400);
      assert.match(badLimit.body.error, /^limit must be an integer from 0 to/);
      const badQueue = await get(dash.url, "/api/queues/a%7Bb/jobs");
      assert.equal(badQueue.status, 400);
      assert.match(badQueue.body.error, /^not a queue name: "a\{b"$/);
      const badId = await post(dash.url, "/api/queues/dash-act/jobs/nope/retry");
      assert.equal(badId.status, 400);
      assert.equal(badId.body.error, 'not a job id: "nope"');
      const badClean = await post(dash.url, "/api/queues/dash-act/clean", { state: "pending" });
      assert.equal(badClean.status, 400);
      assert.match(badClean.body.error, /^state must be one of completed, dead, got "pending"$/);
      const badBody = await get(dash.url, "/api/queues/dash-act/pause", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "[1,2",
      });
      assert.equal(badBody.status, 400);
      assert.equal(badBody.body.error, "request body must be a JSON object");
      assert.equal((await q.counts()).pending, 1, "nothing was written by the refused requests");
      assert.equal((await q.getJob(id))?.state, "pending");
    } finally {
      await dash.close();
    }
  });

  test("a token guards every path; read-only refuses every action", async () => {
    const { conn } = ctx();
    const q = new Queue("dash-guard", conn);
    await q.add("x");
    const dash = await startDashboard(conn, { port: 0, token: "s3cret-token", readOnly: true });
    try {
      assert.match(dash.url, /\?token=s3cret-token$/);
      const bare = new URL("/", dash.url).origin;
      for (const path of ["/", "/api/queues", "/metrics", "/api/stream"]) {
        const refused = await get(bare, path);
        assert.equal(refused.status, 401, path);
        assert.equal(refused.body.error, "a token is required: open the page with ?token=<token>");
      }
      const wrong = await get(bare, "/api/queues", { headers: { authorization: "Bearer s3cret-tokem" } });
      assert.equal(wrong.status, 401);
      const page = await get(bare, "/?token=s3cret-token");
      assert.equal(page.status, 200);
      assert.match(page.body, /<title>EchoMQ dashboard<\/title>/);
      const auth = { authorization: "Bearer s3cret-token" };
      const config = await get(bare, "/api/config", { headers: auth });
      assert.equal(config.body.readOnly, true);
      const pause = await post(bare, "/api/queues/dash-guard/pause", {}, auth);
      assert.equal(pause.status, 403);
      assert.equal(pause.body.error, "this dashboard is read-only (started with --read-only)");
      assert.equal((await q.counts()).paused, false);
    } finally {
      await dash.close();
    }
  });

  test("/metrics: the text format, each queue of the snapshot counted", async () => {
    const { conn, wire } = ctx();
    const q = new Queue("dash-metrics", conn);
    await q.addBulk([{ payload: "a" }, { payload: "b" }, { payload: "c", opts: { delay: 60_000 } }]);
    const dash = await startDashboard(conn, { port: 0 });
    try {
      const res = await get(dash.url, "/metrics");
      assert.equal(res.status, 200);
      const lines = (res.body as string).split("\n");
      assert.ok(lines.includes('echomq_jobs{queue="dash-metrics",state="pending"} 2'), "2 pending");
      assert.ok(lines.includes('echomq_jobs{queue="dash-metrics",state="scheduled"} 1'), "1 scheduled");
      assert.ok(lines.some((l) => l.startsWith(`echomq_build_info{wire="${wire}"`)));
    } finally {
      await dash.close();
    }
  });

  test("options are checked: a typed error names the bad one", async () => {
    const { conn } = ctx();
    await assert.rejects(startDashboard(conn, { port: 70_000 }), {
      name: "InvalidArgumentError",
      message: "invalid port: must be an integer from 0 to 65535, got 70000",
    });
    await assert.rejects(startDashboard(conn, { token: "short" }), {
      name: "InvalidArgumentError",
      message: "invalid token: must be a string of at least 8 characters",
    });
    await assert.rejects(startDashboard(conn, { sampleMs: 1 }), {
      name: "InvalidArgumentError",
      message: "invalid sampleMs: must be an integer from 50 to 3600000, got 1",
    });
  });
});

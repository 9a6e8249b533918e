/**
 * The dashboard's reads beyond the first page, on both wires: a state's page and its total
 * agreeing even when a job enters the state between the reads; a job found by its idempotency
 * key, jobs found by payload text.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Connection } from "../src/connector/connection.js";
import { startDashboard } from "../src/dashboard/server.js";
import { Queue, Worker } from "../src/index.js";
import { get, post } from "./support/dashboard-http.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

/** `conn`, with `hook` run once after the first `ZRANGE` of a key ending in `suffix` answers. */
function afterRange(conn: Connection, suffix: string, hook: () => Promise<void>): Connection {
  let armed = true;
  return new Proxy(conn, {
    get(target, prop) {
      if (prop === "send") {
        return async (command: string, args: string[], routeKey?: string) => {
          const reply = await target.send(command, args, routeKey);
          if (armed && command === "ZRANGE" && String(args[0]).endsWith(suffix)) {
            armed = false;
            await hook();
          }
          return reply;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

forEachWire("dashboard views", (ctx) => {
  test("a page and its total agree when a job dies between the reads (not 1–2 of 3)", async () => {
    const { conn } = ctx();
    const q = new Queue("agree", conn);
    await q.addBulk([{ payload: "a" }, { payload: "b" }, { payload: "held" }]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const worker = new Worker(
      q,
      async (job) => {
        if (job.text() === "held") await gate;
        throw new Error("no");
      },
      { attempts: 1, idleCheckMs: 50 },
    );
    await until("2 dead, 1 active", async () => {
      const c = await q.counts();
      return c.dead === 2 && c.active === 1;
    });
    const spied = afterRange(conn, ":dead", async () => {
      release();
      await until("the held job dead", async () => (await q.counts()).dead === 3);
    });
    const dash = await startDashboard(spied, { port: 0, queues: ["agree"] });
    try {
      const page = await get(dash.url, "/api/queues/agree/jobs?state=dead&limit=20");
      assert.equal(page.status, 200);
      assert.equal(page.body.jobs.length, 2, "the page was read before the third died");
      assert.equal(page.body.total, 2, "the total is the set the page was read from");
      const again = await get(dash.url, "/api/queues/agree/jobs?state=dead&limit=20");
      assert.deepEqual([again.body.jobs.length, again.body.total], [3, 3]);
      const paged = await get(dash.url, "/api/queues/agree/jobs?state=dead&limit=2");
      assert.deepEqual([paged.body.jobs.length, paged.body.total], [2, 3]);
      const past = await get(dash.url, "/api/queues/agree/jobs?state=dead&offset=10&limit=2");
      assert.deepEqual([past.body.jobs.length, past.body.total], [0, 3]);
    } finally {
      await worker.close();
      await dash.close();
    }
  });

  test("find by key and search by payload: what each finds, bad input named", async () => {
    const { conn } = ctx();
    const q = new Queue("finds", conn);
    const a = await q.add("alpha beta", { key: "order-1" });
    await q.add("gamma");
    const dash = await startDashboard(conn, { port: 0, queues: ["finds"] });
    try {
      assert.deepEqual((await get(dash.url, "/api/queues/finds/find?key=order-1")).body, { id: a.id });
      assert.deepEqual((await get(dash.url, "/api/queues/finds/find?key=order-2")).body, { id: null });
      const empty = await get(dash.url, "/api/queues/finds/find?key=");
      assert.equal(empty.status, 400);
      assert.match(empty.body.error, /^invalid key: /);
      const found = await get(dash.url, "/api/queues/finds/search?state=pending&text=beta");
      assert.deepEqual(
        [found.body.jobs.map((j: { id: string }) => j.id), found.body.scanned, found.body.complete],
        [[a.id], 2, true],
      );
      const none = await get(dash.url, "/api/queues/finds/search?state=pending&text=");
      assert.equal(none.status, 400);
      assert.equal(none.body.error, "text must not be empty: give the bytes to look for");
    } finally {
      await dash.close();
    }
  });

  test("bulk: bad input named and nothing done; a read-only dashboard refuses it", async () => {
    const { conn } = ctx();
    const q = new Queue("bulky", conn);
    const { id } = await q.add("x", { delay: 60_000 });
    const dash = await startDashboard(conn, { port: 0, queues: ["bulky"] });
    const ro = await startDashboard(conn, { port: 0, queues: ["bulky"], readOnly: true });
    try {
      const path = "/api/queues/bulky/bulk";
      const cases: [unknown, string][] = [
        [
          { action: "obliterate", state: "dead", max: 1 },
          'action must be one of retry, promote, remove, got "obliterate"',
        ],
        [{ action: "retry", state: "pending", max: 1 }, 'retry takes the jobs of dead, got "pending"'],
        [
          { action: "promote", state: "scheduled" },
          "max must be the count confirmed, an integer of at least 1, got undefined",
        ],
        [{ action: "remove", ids: ["nope"] }, 'not a job id: "nope"; nothing was done'],
        [
          { action: "remove", ids: [] },
          "ids must be an array of 1 to 100 job ids; send more in further requests",
        ],
      ];
      for (const [body, error] of cases) {
        const res = await post(dash.url, path, body);
        assert.deepEqual([res.status, res.body.error], [400, error]);
      }
      const refused = await post(ro.url, path, { action: "promote", state: "scheduled", max: 1 });
      assert.deepEqual(
        [refused.status, refused.body.error],
        [403, "this dashboard is read-only (started with --read-only)"],
      );
      assert.equal((await q.getJob(id))?.state, "scheduled", "nothing was done");
      const done = await post(dash.url, path, { action: "promote", state: "scheduled", max: 5 });
      assert.deepEqual(done.body, { done: 1, refused: [], left: 0 });
      assert.equal((await q.getJob(id))?.state, "pending");
    } finally {
      await dash.close();
      await ro.close();
    }
  });
});

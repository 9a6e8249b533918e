/**
 * The operator's console in a real headless Chromium, on both wires, beyond a queue's jobs: the
 * workers view (each worker's concurrency and busy slots as `CLIENT LIST` holds them, the
 * per-queue sums the test computes itself, a worker that stops leaving the list), adding a job
 * and replacing a waiting job's data from the page (behind a confirmation; refused read-only and
 * without the token), and axe-core on every view (no serious or critical violation), keyboard
 * navigation between the views, no console error on any page.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { startDashboard } from "../src/dashboard/server.js";
import { FlowProducer } from "../src/flows/producer.js";
import { type Job, Queue, Worker } from "../src/index.js";
import { listWorkers } from "../src/observe/workers.js";
import { useBrowser, WIDE } from "./support/browser.js";
import { post } from "./support/dashboard-http.js";
import { shot } from "./support/shots.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const chromium = useBrowser();

/** axe-core's serious and critical violations of the page as it is now: `rule: target, …`. */
async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.addScriptTag({ content: AXE });
  const found = await page.evaluate(async () => {
    const g = globalThis as any;
    const r = await g.axe.run(g.document, { resultTypes: ["violations"] });
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n: any) => n.target.join(" ")),
    }));
  });
  return (found as { id: string; impact: string; targets: string[] }[])
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.targets.slice(0, 3).join(", ")}`);
}

/** Holds each job open until released. */
function holding() {
  const open: (() => void)[] = [];
  return {
    handler: (_job: Job) => new Promise<string>((resolve) => open.push(() => resolve("ok"))),
    get started() {
      return open.length;
    },
    release: () => {
      for (const r of open.splice(0)) r();
    },
  };
}

const cells = (page: Page, table: string, row: string, field: string) =>
  page.locator(`#${table} tr[${row}] [data-field="${field}"]`).textContent();

forEachWire("dashboard operator views in Chromium", (ctx) => {
  test("workers: who is connected per queue, concurrency, busy slots; a worker that stops leaves", async () => {
    const { conn } = ctx();
    const busyQ = new Queue("w-busy", conn);
    const idleQ = new Queue("w-idle", conn);
    const hold = holding();
    const busy = new Worker(busyQ, hold.handler, { concurrency: 3, idleCheckMs: 50 });
    const idle = new Worker(idleQ, async () => "ok", { concurrency: 2, idleCheckMs: 50 });
    const idle2 = new Worker(idleQ, async () => "ok", { concurrency: 1, idleCheckMs: 50 });
    await Promise.all([busy.ready, idle.ready, idle2.ready]);
    await busyQ.addBulk([{ payload: "a" }, { payload: "b" }]);
    await until("both jobs held", () => hold.started === 2);
    await until(
      "the busy slots announced",
      async () => (await listWorkers(conn, "w-busy"))[0]?.busy === (await busyQ.counts()).active,
    );
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      await page.goto(`${dash.url}#/workers`);
      await page.locator("#workers tbody tr").nth(2).waitFor();
      // The expected figures: what the server's CLIENT LIST holds now, summed by the test.
      const held = (await listWorkers(conn)).filter((w) => w.pid === process.pid);
      assert.equal(held.length, 3);
      for (const w of held) {
        const row = `data-worker="${w.id}"`;
        assert.equal(await cells(page, "workers", row, "concurrency"), String(w.concurrency));
        assert.equal(await cells(page, "workers", row, "busy"), String(w.busy));
      }
      for (const name of ["w-busy", "w-idle"]) {
        const mine = held.filter((w) => w.queue === name);
        const row = `data-queue="${name}"`;
        assert.equal(await cells(page, "worker-queues", row, "workers"), String(mine.length));
        const sum = (f: "concurrency" | "busy") => String(mine.reduce((n, w) => n + (w[f] ?? 0), 0));
        assert.equal(await cells(page, "worker-queues", row, "concurrency"), sum("concurrency"));
        assert.equal(await cells(page, "worker-queues", row, "busy"), sum("busy"));
      }
      assert.equal(await cells(page, "worker-queues", 'data-queue="w-busy"', "busy"), "2");
      await shot(page, "workers", ctx().wire);

      // Reload keeps the place; a queue's own workers have their address too.
      await page.reload();
      await page.locator("#workers tbody tr").nth(2).waitFor();
      await page.goto(`${dash.url}#/workers?queue=w-idle`);
      await page.locator("#workers-title", { hasText: "Workers of w-idle" }).waitFor();
      await until(
        "only w-idle's workers",
        async () => (await page.locator("#workers tbody tr").count()) === 2,
      );

      // A worker that stops leaves the list (the page reads it again every 2 s).
      const gone = held.find((w) => w.queue === "w-idle" && w.concurrency === 1)!;
      await idle2.close();
      await page.locator(`#workers tr[data-worker="${gone.id}"]`).waitFor({ state: "detached" });
      assert.equal(await cells(page, "worker-queues", 'data-queue="w-idle"', "workers"), "1");
      assert.deepEqual(
        (await listWorkers(conn, "w-idle")).filter((w) => w.pid === process.pid).map((w) => w.id),
        [held.find((w) => w.queue === "w-idle" && w.concurrency === 2)!.id],
      );
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      hold.release();
      await Promise.all([busy.close(), idle.close(), idle2.close()]);
      await page.close();
      await dash.close();
    }
  });

  test("add a job and edit a waiting job's data, behind a confirmation", async () => {
    const { conn } = ctx();
    const q = new Queue("steer", conn);
    await q.add("first");
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      await page.goto(`${dash.url}#/q/steer?state=pending`);
      await page.locator("#jobs tbody tr").first().waitFor();
      await page.click("#add summary");
      await page.fill("#add-data", '{"order":42}');
      await page.fill("#add-name", "by-hand");
      await page.fill("#add-priority", "3");
      // Cancelled: nothing written.
      await page.click("#add-submit");
      await page.locator("#confirm[open]").waitFor();
      assert.equal(
        await page.locator("#confirm-text").textContent(),
        "Add a job to steer (12 bytes of data)?",
      );
      await page.click("#confirm-cancel");
      assert.equal((await q.counts()).pending, 1);
      await page.click("#add-submit");
      await page.click("#confirm-ok");
      await page.locator("#message", { hasText: "Added job" }).waitFor();
      const id = /Added job (\S+) to steer/.exec((await page.locator("#message").textContent())!)![1]!;
      await page.locator("#job-id", { hasText: id }).waitFor();
      const added = (await q.getJob(id))!;
      assert.deepEqual(
        [added.state, added.payload.toString(), added.name, added.priority],
        ["pending", '{"order":42}', "by-hand", 3],
      );

      // Edit its data: the editor holds the data the row holds; the new data is stored.
      assert.equal(await page.locator("#edit-data").inputValue(), '{"order":42}');
      await page.fill("#edit-data", '{"order":43}');
      await page.click("#edit-submit");
      assert.equal(
        await page.locator("#confirm-text").textContent(),
        `Replace the data of job ${id} (pending)?`,
      );
      await page.click("#confirm-ok");
      await page.locator("#message", { hasText: `Replaced the data of job ${id}` }).waitFor();
      assert.equal((await q.getJob(id))!.payload.toString(), '{"order":43}');
      await page.locator("#job-payload", { hasText: '{"order":43}' }).waitFor(); // the view read again

      // A job that is not waiting has no editor, and the API refuses it, nothing written.
      const worker = new Worker(q, async () => "done", { idleCheckMs: 50 });
      await until("both done", async () => (await q.counts()).completed === 2);
      await worker.close();
      await page.reload();
      await page.locator("#job-id", { hasText: id }).waitFor();
      await page.locator("#job-fields dd[data-field=state]", { hasText: "completed" }).waitFor();
      assert.equal(await page.locator("#edit-form").isHidden(), true);
      const refused = await post(dash.url, `/api/queues/steer/jobs/${id}/data`, { data: "x" });
      assert.deepEqual(refused, {
        status: 409,
        body: {
          error: `job ${id} is completed: only a waiting job (pending or scheduled) has its data edited here`,
        },
      });
      assert.equal((await q.getJob(id))!.payload.toString(), '{"order":43}');
      // Bad input named, nothing written.
      const before = await q.counts();
      assert.deepEqual(await post(dash.url, "/api/queues/steer/add", { data: 7 }), {
        status: 400,
        body: { error: "data must be a string (the job's data as text), got number" },
      });
      assert.deepEqual(await post(dash.url, "/api/queues/steer/add", { data: "x", opts: { parent: 1 } }), {
        status: 400,
        body: { error: "opts.parent is not taken here (only name, priority, delay, maxAttempts, key)" },
      });
      const bad = await post(dash.url, "/api/queues/steer/add", { data: "x", opts: { priority: 1.5 } });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error, /priority/);
      assert.deepEqual(await q.counts(), before);
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("adding and editing are refused read-only and without the token; nothing written", async () => {
    const { conn } = ctx();
    const q = new Queue("guarded", conn);
    const { id } = await q.add("kept");
    const ro = await startDashboard(conn, { port: 0, readOnly: true });
    const tokened = await startDashboard(conn, { port: 0, token: "op-token-9" });
    try {
      const readOnly = {
        status: 403,
        body: { error: "this dashboard is read-only (started with --read-only)" },
      };
      assert.deepEqual(await post(ro.url, "/api/queues/guarded/add", { data: "x" }), readOnly);
      assert.deepEqual(await post(ro.url, `/api/queues/guarded/jobs/${id}/data`, { data: "x" }), readOnly);
      const base = tokened.url.replace(/\?.*$/, "");
      const noToken = {
        status: 401,
        body: { error: "a token is required: open the page with ?token=<token>" },
      };
      assert.deepEqual(await post(base, "/api/queues/guarded/add", { data: "x" }), noToken);
      assert.deepEqual(await post(base, `/api/queues/guarded/jobs/${id}/data`, { data: "x" }), noToken);
      const foreign = await post(
        base,
        "/api/queues/guarded/add",
        { data: "x" },
        { authorization: "Bearer op-token-9", origin: "http://evil.example" },
      );
      assert.equal(foreign.status, 403);
      assert.equal((await q.counts()).pending, 1, "nothing added");
      assert.equal((await q.getJob(id))!.payload.toString(), "kept");
      const ok = await post(
        base,
        "/api/queues/guarded/add",
        { data: "y" },
        { authorization: "Bearer op-token-9" },
      );
      assert.equal(ok.status, 200);
      assert.equal((await q.getJob(ok.body.id))!.payload.toString(), "y");
    } finally {
      await ro.close();
      await tokened.close();
    }
  });

  test("axe-core on every view: no serious or critical violation; keyboard between views", async () => {
    const { conn } = ctx();
    const q = new Queue("a11y", conn);
    const { id } = await q.add("k");
    await q.schedule("nightly", { cron: "0 3 * * *", payload: "n" });
    const flow = await new FlowProducer(conn).add({
      queue: "a11y",
      payload: "parent",
      children: [{ queue: "a11y-kids", payload: "c" }],
    });
    const worker = new Worker(new Queue("a11y-idle", conn), async () => "ok", { idleCheckMs: 50 });
    await worker.ready;
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      // Keyboard only: from the page's start, Tab reaches the Workers link; Enter opens the view.
      await page.goto(dash.url);
      await page.locator('#queues tr[data-queue="a11y"]').waitFor();
      let reached = false;
      for (let i = 0; i < 10 && !reached; i++) {
        await page.keyboard.press("Tab");
        reached = await page.evaluate(() => (globalThis as any).document.activeElement?.id === "nav-workers");
      }
      assert.ok(reached, "Tab reaches the Workers link");
      await page.keyboard.press("Enter");
      await page.locator("#workers-view").waitFor();
      assert.match(page.url(), /#\/workers$/);
      assert.equal(await page.locator("#nav-workers").getAttribute("aria-current"), "page");

      for (const where of [
        "",
        "#/q/a11y?state=pending",
        `#/q/a11y/job/${id}`,
        `#/q/a11y/job/${flow.id}`,
        "#/q/a11y/schedules",
        "#/q/a11y/limits",
        "#/workers",
        "#/workers?queue=a11y-idle",
      ]) {
        await page.goto(`${dash.url}${where}`);
        await page.locator("#live", { hasText: "live" }).waitFor();
        if (where.includes("/job/"))
          await page.locator("#job-id", { hasText: where.split("/")[4]! }).waitFor();
        if (where.startsWith("#/workers")) await page.locator("#workers tbody tr").first().waitFor();
        assert.deepEqual(await axeViolations(page), [], `axe on ${where || "the queues"}`);
      }
      // The add form open, and the confirmation dialog open.
      await page.goto(`${dash.url}#/q/a11y?state=pending`);
      await page.locator("#jobs tbody tr").first().waitFor();
      await page.click("#add summary");
      assert.deepEqual(await axeViolations(page), [], "axe with the add form open");
      await page.click("#add-submit");
      await page.locator("#confirm[open]").waitFor();
      assert.deepEqual(await axeViolations(page), [], "axe with the confirmation open");
      await page.keyboard.press("Escape");
      assert.deepEqual(errors, [], "no console errors on any page");
    } finally {
      await worker.close();
      await page.close();
      await dash.close();
    }
  });
});

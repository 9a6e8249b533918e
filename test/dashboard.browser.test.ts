/**
 * The dashboard in a real headless Chromium (Debian's `chromium`, driven by `playwright-core`),
 * on both wires: the test adds jobs and fails some, opens the page, checks the numbers it shows
 * against the server's, pages through the dead jobs, retries a dead job through the page (with
 * its confirmation) and sees it complete — live, without reloading; and a page of another origin
 * that submits forms to the dashboard's drain route drains nothing. With `ECHOMQ_SCREENSHOTS=<dir>`
 * it saves the main views there (how `docs/dashboard-*.png` are made).
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { startDashboard } from "../src/dashboard/server.js";
import { type Job, Queue, Worker } from "../src/index.js";
import { useBrowser, WIDE } from "./support/browser.js";
import { shot } from "./support/shots.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const chromium = useBrowser();

/** The text of the queue row's cell for `state`. */
const cell = (page: Page, queue: string, state: string) =>
  page.locator(`#queues tr[data-queue="${queue}"] td[data-state="${state}"]`);

forEachWire("dashboard in Chromium", (ctx) => {
  test("numbers as the server has them; a dead job retried through the page completes", async () => {
    const { conn, wire } = ctx();
    const orders = new Queue("orders", conn);
    const mails = new Queue("mails", conn);
    await mails.addBulk(Array.from({ length: 4 }, (_, i) => ({ payload: `mail ${i}` })));
    await mails.add("later", { delay: 3_600_000 });
    const ids = (
      await orders.addBulk(
        Array.from({ length: 30 }, (_, i) => ({ payload: JSON.stringify({ order: i, fail: i % 10 === 0 }) })),
      )
    ).map((r) => r.id);
    let healed = false;
    const worker = new Worker(
      orders,
      async (job: Job) => {
        await job.log(`charging order ${JSON.parse(job.text()).order}`);
        if (JSON.parse(job.text()).fail && !healed) throw new Error("card declined");
        return "charged";
      },
      { attempts: 1, idleCheckMs: 50 },
    );
    // Settled as the server counts them (a handler that has run may not have completed yet).
    await until(
      "30 orders settled",
      async () => {
        const c = await orders.counts();
        return c.completed + c.dead === 30;
      },
      30_000,
    );
    const before = await orders.counts();
    assert.deepEqual([before.completed, before.dead], [27, 3]);

    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const page = await chromium.browser.newPage(WIDE);
    try {
      await page.goto(dash.url);
      await page.locator("#live", { hasText: "live" }).waitFor();
      // The queues as the server counts them.
      assert.deepEqual(
        await page
          .locator("#queues tbody tr")
          .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-queue"))),
        ["mails", "orders"],
      );
      for (const [queue, state, n] of [
        ["orders", "completed", 27],
        ["orders", "dead", 3],
        ["orders", "pending", 0],
        ["mails", "pending", 4],
        ["mails", "scheduled", 1],
      ] as const) {
        assert.equal(await cell(page, queue, state).textContent(), String(n), `${queue} ${state}`);
      }
      await shot(page, "queues", wire);

      // The dead jobs, by the tab, then one job's detail.
      await page.locator('#queues tr[data-queue="orders"]').click();
      await page.locator('#states button[data-state="dead"]').click();
      await page.locator("#page", { hasText: "1–3 of 3" }).waitFor();
      const shown = await page
        .locator("#jobs tbody tr")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id")));
      const dead = [ids[0], ids[10], ids[20]];
      assert.deepEqual(new Set(shown), new Set(dead));
      assert.equal(
        await page.locator("#jobs tbody tr td:nth-child(6)").first().textContent(),
        "Error: card declined",
      );
      await shot(page, "jobs", wire);

      // Search by id opens the job.
      await page.fill("#search-text", ids[10]!);
      await page.click("#search button");
      await page.locator("#job-id", { hasText: ids[10]! }).waitFor();
      assert.equal(await page.locator('dd[data-field="state"]').textContent(), "dead");
      assert.equal(await page.locator("#job-error").textContent(), "Error: card declined");
      assert.equal(await page.locator("#job-logs").textContent(), "charging order 10");
      assert.match((await page.locator("#job-timeline").textContent()) ?? "", /added.*active.*failed.*dead/s);
      await shot(page, "job", wire);

      // Retry through the page: cancel first (nothing happens), then confirm.
      healed = true;
      await page.click("#job-retry");
      await page.locator("#confirm[open]").waitFor();
      await page.click("#confirm-cancel");
      assert.equal((await orders.getJob(ids[10]!))?.state, "dead", "a cancelled confirmation did nothing");
      await page.click("#job-retry");
      await page.click("#confirm-ok");
      await page.locator("#message", { hasText: `Retry job ${ids[10]}? — done` }).waitFor();
      // Live: the queue row counts the completion without a reload.
      await cell(page, "orders", "completed").filter({ hasText: "28" }).waitFor({ timeout: 20_000 });
      assert.equal(await cell(page, "orders", "dead").textContent(), "2");
      await page.fill("#search-text", ids[10]!);
      await page.click("#search button");
      await page.locator('dd[data-field="state"]', { hasText: "completed" }).waitFor();
      assert.equal(await page.locator("#job-result").textContent(), "charged");
      assert.deepEqual([(await orders.counts()).completed, (await orders.counts()).dead], [28, 2]);
    } finally {
      await page.close();
      await worker.close();
      await dash.close();
    }
  });

  test("completed/s (last minute) is the minute's average, not the latest sample", async () => {
    const { conn } = ctx();
    const q = new Queue("steady", conn);
    await q.addBulk(Array.from({ length: 4 }, (_, i) => ({ payload: `s${i}` })));
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    const page = await chromium.browser.newPage();
    try {
      await fetch(new URL("/api/queues", dash.url)); // the bus's position taken: count from here
      const worker = new Worker(q, async () => "ok", { idleCheckMs: 50 });
      await until("4 completed", async () => (await q.counts()).completed === 4, 20_000);
      await worker.close();
      await page.goto(dash.url);
      const rate = page.locator('#queues tr[data-queue="steady"] td[data-minute-completed="4"]');
      // Samples after the completions count none: the latest sample reads 0.0/s, the minute not.
      await until(
        "a sample after the completions",
        async () => (await rate.count()) === 1 && (await rate.getAttribute("data-rate")) === "0",
        20_000,
      );
      const [text, seconds] = await rate.evaluate((td) => [td.textContent, td.dataset.minuteSeconds]);
      assert.equal(text?.trim(), `${(4 / Number(seconds)).toFixed(1)}/s`);
      assert.notEqual(text?.trim(), "0.0/s");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("read-only: no action is offered, and the API refuses one", async () => {
    const { conn } = ctx();
    const q = new Queue("ro", conn);
    await q.add("x");
    const dash = await startDashboard(conn, { port: 0, readOnly: true, token: "page-token-1" });
    const page = await chromium.browser.newPage();
    try {
      await page.goto(dash.url);
      await page.locator("#mode", { hasText: "read-only" }).waitFor();
      await page.locator('#queues tr[data-queue="ro"]').click();
      await page.locator("#jobs tbody tr").first().waitFor();
      assert.equal(await page.locator("#pause").isVisible(), false);
      assert.equal(await page.locator("#drain").isVisible(), false);
      const status = await page.evaluate(async (token: string) => {
        const res = await fetch("/api/queues/ro/pause", {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
        });
        return res.status;
      }, "page-token-1");
      assert.equal(status, 403);
      assert.equal((await q.counts()).paused, false);
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("a page of another origin that auto-submits a form to the drain route drains nothing", async () => {
    const { conn } = ctx();
    const q = new Queue("xsite", conn);
    await q.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: `keep ${i}` })));
    const dash = await startDashboard(conn, { port: 0 });
    const drain = new URL("/api/queues/xsite/drain", dash.url).href;
    // The forms an attacker's page would send: empty (urlencoded), and text/plain shaped as JSON.
    const forms: Record<string, string> = {
      "/empty": `<form method="POST" action="${drain}"></form>`,
      "/plain": `<form method="POST" action="${drain}" enctype="text/plain"><input name='{"a":"' value='"}'></form>`,
    };
    const evil = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<!doctype html><body>${forms[req.url ?? ""] ?? ""}<script>document.forms[0].submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    const evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    const page = await chromium.browser.newPage();
    try {
      for (const path of Object.keys(forms)) {
        const answered = page.waitForResponse((r) => r.url() === drain);
        await page.goto(`${evilOrigin}${path}`);
        const res = await answered;
        assert.equal(res.status(), 403, path);
        assert.equal(res.request().headers().origin, evilOrigin, "the browser named the page's origin");
        assert.match(
          (await res.json()).error,
          /^refused: an action from "http:\/\/127\.0\.0\.1:\d+" \(Origin\), not from this dashboard's own page; nothing was done$/,
        );
        assert.equal((await q.counts()).pending, 5, `${path}: nothing drained`);
      }
    } finally {
      await page.close();
      await new Promise<void>((resolve) => evil.close(() => resolve()));
      await dash.close();
    }
  });
});

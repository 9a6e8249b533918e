/**
 * The queue's and a job's actions through the page's own buttons, in a real headless Chromium, on
 * both wires: Pause (cancelled once: no request, nothing changed; then confirmed),
 * Resume, a scheduled job's "Run now" (promote), a pending job's Remove, "Drain waiting jobs", and
 * the two Clean buttons (completed, dead).
 * Each confirmation's text is asserted as the page states it, each outcome read by the test from
 * the server (the `meta` pause flag, `getJob`, `EXISTS` on the row, the counts), and the page's
 * figures checked against it after the next sample. The page logs no console error. (A completed
 * job keeps the queue's keys through the drain: a queue drained to nothing leaves the list.)
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { startDashboard } from "../src/dashboard/server.js";
import { Queue, Worker } from "../src/index.js";
import { jobKey, queueKey } from "../src/keyspace.js";
import { useBrowser, WIDE } from "./support/browser.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const chromium = useBrowser();

const Q = "acts";

/** The text of the queue row's cell for `state`. */
const cell = (page: Page, state: string) =>
  page.locator(`#queues tr[data-queue="${Q}"] td[data-state="${state}"]`);

/** Clicks `button`, checks the confirmation's exact text, then answers it (`ok` or `cancel`). */
async function confirmVia(page: Page, button: string, text: string, answer: "ok" | "cancel") {
  await page.click(button);
  await page.locator("#confirm[open]").waitFor();
  assert.equal(await page.locator("#confirm-text").textContent(), text, `${button}'s confirmation`);
  await page.click(`#confirm-${answer}`);
  await page.locator("#confirm:not([open])").waitFor({ state: "attached" });
  if (answer === "ok") await page.locator("#message", { hasText: `${text} — done` }).waitFor();
}

forEachWire("dashboard actions in Chromium", (ctx) => {
  test("Pause, Resume, Run now, Remove and Drain through the page's buttons; the server holds each", async () => {
    const { conn, server } = ctx();
    const q = new Queue(Q, conn);
    // One completed job first: a drain leaves it, so the queue keeps keys and its row.
    const done = (await q.add("done")).id;
    const worker = new Worker(q, async () => "ok", { idleCheckMs: 50 });
    await until("the first job completed", async () => (await q.counts()).completed === 1, 20_000);
    await worker.close();
    const ids = (await q.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: `job ${i}` })))).map(
      (r) => r.id,
    );
    const later = (await q.add("later", { delay: 3_600_000 })).id;
    const kept = (await q.add("kept", { delay: 3_600_000 })).id;
    const pausedFlag = async () => server.cli("HGET", queueKey(Q, "meta"), "paused");
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200, token: "actions-token-1" });
    const { page, errors } = await chromium.newPage(WIDE);
    const posts: string[] = [];
    page.on("request", (r) => void (r.method() === "POST" && posts.push(new URL(r.url()).pathname)));
    try {
      await page.goto(`${dash.url}#/q/${Q}?state=pending`);
      await page.locator("#live", { hasText: "live" }).waitFor();
      await page.locator("#page", { hasText: "1–5 of 5" }).waitFor();
      assert.equal(await cell(page, "pending").textContent(), "5");
      assert.equal(await cell(page, "scheduled").textContent(), "2");
      assert.equal(await page.locator("#queue-paused").isVisible(), false);

      // Pause: cancelled once (no request sent, nothing changed), then confirmed.
      const counted = await q.counts();
      await confirmVia(page, "#pause", `Pause ${Q}?`, "cancel");
      assert.deepEqual(posts, [], "a cancelled confirmation sends nothing");
      assert.deepEqual(await q.counts(), counted, "a cancelled confirmation changed nothing");
      assert.equal(await pausedFlag(), null);
      await confirmVia(page, "#pause", `Pause ${Q}?`, "ok");
      assert.equal((await q.counts()).paused, true);
      assert.equal(String(await pausedFlag()), "1", "the meta flag holds the pause");
      // The page shows it from the next sample: the badge and the row's name.
      await page.locator("#queue-paused").waitFor({ state: "visible", timeout: 20_000 });
      await page
        .locator(`#queues tr[data-queue="${Q}"] td:first-child`, { hasText: `${Q} (paused)` })
        .waitFor();

      // Resume.
      await confirmVia(page, "#resume", `Resume ${Q}?`, "ok");
      assert.equal((await q.counts()).paused, false);
      assert.equal(await pausedFlag(), null, "the meta flag is cleared");
      await page.locator("#queue-paused").waitFor({ state: "hidden", timeout: 20_000 });
      await page.locator(`#queues tr[data-queue="${Q}"] td:first-child a`, { hasText: /^acts$/ }).waitFor();

      // A scheduled job, run now: the server holds it pending.
      await page.locator('#states button[data-state="scheduled"]').click();
      await page.locator("#page", { hasText: "1–2 of 2" }).waitFor();
      await page.locator(`#jobs tbody tr[data-id="${later}"]`).click();
      await page.locator("#job-id", { hasText: later }).waitFor();
      assert.equal(await page.locator('dd[data-field="state"]').textContent(), "scheduled");
      assert.equal(await page.locator("#job-retry").isDisabled(), true, "no retry for a scheduled job");
      await confirmVia(page, "#job-promote", `Run job ${later} now?`, "ok");
      assert.equal((await q.getJob(later))?.state, "pending", "the server holds it pending");
      assert.equal((await q.getJob(kept))?.state, "scheduled", "the other delayed job stays");
      await page.locator('dd[data-field="state"]', { hasText: "pending" }).waitFor();
      assert.equal(await page.locator("#job-promote").isDisabled(), true);
      await cell(page, "pending").filter({ hasText: /^6$/ }).waitFor({ timeout: 20_000 });
      assert.equal(await cell(page, "scheduled").textContent(), "1");

      // A pending job, removed: its row is gone on the server and from the page's list.
      const gone = ids[1]!;
      await page.locator('#states button[data-state="pending"]').click();
      await page.locator("#page", { hasText: "1–6 of 6" }).waitFor();
      await page.locator(`#jobs tbody tr[data-id="${gone}"]`).click();
      await page.locator("#job-id", { hasText: gone }).waitFor();
      await confirmVia(page, "#job-remove", `Remove job ${gone}?`, "ok");
      assert.equal(await q.getJob(gone), null);
      assert.equal(Number(await server.cli("EXISTS", jobKey(Q, gone))), 0, "the row is deleted");
      await page.locator("#job").waitFor({ state: "hidden" }); // back to the list
      await page.locator("#page", { hasText: "1–5 of 5" }).waitFor();
      assert.equal(await page.locator(`#jobs tbody tr[data-id="${gone}"]`).count(), 0);

      // Drain: every waiting job (pending, then scheduled) deleted, as many as the server held.
      const held = await q.counts();
      assert.deepEqual([held.pending, held.scheduled], [5, 1]);
      const removed = held.pending + held.scheduled;
      await confirmVia(page, "#drain", `Remove every waiting job of ${Q}?`, "ok");
      assert.equal(
        await page.locator("#message").textContent(),
        `Remove every waiting job of ${Q}? — done (${removed} removed)`,
      );
      const drained = await q.counts();
      assert.deepEqual([drained.pending, drained.scheduled, drained.completed], [0, 0, 1]);
      assert.equal((await q.getJob(done))?.state, "completed", "a drain leaves a completed job");
      for (const id of [...ids, later, kept])
        assert.equal(Number(await server.cli("EXISTS", jobKey(Q, id))), 0, `row ${id} deleted`);
      await cell(page, "pending").filter({ hasText: /^0$/ }).waitFor({ timeout: 20_000 });
      assert.equal(await cell(page, "scheduled").textContent(), "0");
      assert.equal(await cell(page, "completed").textContent(), "1");
      await page.locator('#states button[data-state="pending"]', { hasText: "pending (0)" }).waitFor();
      await page.locator("#page", { hasText: "no jobs" }).waitFor();

      assert.deepEqual(posts, [
        `/api/queues/${Q}/pause`,
        `/api/queues/${Q}/resume`,
        `/api/queues/${Q}/jobs/${later}/promote`,
        `/api/queues/${Q}/jobs/${gone}/remove`,
        `/api/queues/${Q}/drain`,
      ]);
      assert.deepEqual(errors, [], "no console error on the page");
    } finally {
      await page.close();
      await dash.close();
    }
  });
});

forEachWire("dashboard drain to nothing in Chromium", (ctx) => {
  test("a queue drained to nothing: its row leaves the list and its view's tabs read 0", async () => {
    const { conn, server } = ctx();
    const q = new Queue("empty", conn);
    const ids = (await q.addBulk([{ payload: "a" }, { payload: "b" }, { payload: "c" }])).map((r) => r.id);
    await q.add("later", { delay: 3_600_000 });
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      await page.goto(`${dash.url}#/q/empty?state=pending`);
      await page.locator("#live", { hasText: "live" }).waitFor();
      await page.locator('#states button[data-state="pending"]', { hasText: "pending (3)" }).waitFor();
      await confirmVia(page, "#drain", "Remove every waiting job of empty?", "ok");
      assert.equal(
        await page.locator("#message").textContent(),
        "Remove every waiting job of empty? — done (4 removed)",
      );
      const held = await q.counts();
      assert.deepEqual([held.pending, held.scheduled], [0, 0]);
      for (const id of ids) assert.equal(Number(await server.cli("EXISTS", jobKey("empty", id))), 0);
      // The server holds no key of the queue: the list drops it, the view counts nothing.
      await page.locator('#queues tr[data-queue="empty"]').waitFor({ state: "detached", timeout: 20_000 });
      await page.locator('#states button[data-state="pending"]', { hasText: "pending (0)" }).waitFor();
      assert.deepEqual(await page.locator("#states button").allTextContents(), [
        "pending (0)",
        "scheduled (0)",
        "active (0)",
        "completed (0)",
        "dead (0)",
        "waiting (0)",
      ]);
      await page.locator("#page", { hasText: "no jobs" }).waitFor();
      assert.deepEqual(errors, [], "no console error on the page");
    } finally {
      await page.close();
      await dash.close();
    }
  });
});

forEachWire("dashboard clean in Chromium", (ctx) => {
  test("Clean completed, then Clean dead, through the page's buttons: as many removed as the server held", async () => {
    const { conn, server } = ctx();
    const q = new Queue("cleans", conn);
    const good = (await q.addBulk([{ payload: "ok" }, { payload: "ok" }])).map((r) => r.id);
    const bad = (await q.addBulk([1, 2, 3].map(() => ({ payload: "bad", opts: { maxAttempts: 1 } })))).map(
      (r) => r.id,
    );
    const worker = new Worker(
      q,
      async (job) => {
        if (job.payload.toString() === "bad") throw new Error("boom");
        return "ok";
      },
      { idleCheckMs: 50 },
    );
    await until(
      "2 completed and 3 dead",
      async () => {
        const c = await q.counts();
        return c.completed === 2 && c.dead === 3;
      },
      20_000,
    );
    await worker.close();
    const waiting = (await q.add("stays")).id; // the queue keeps a pending job: its row stays listed
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const { page, errors } = await chromium.newPage(WIDE);
    const row = (state: string) => page.locator(`#queues tr[data-queue="cleans"] td[data-state="${state}"]`);
    try {
      await page.goto(`${dash.url}#/q/cleans?state=completed`);
      await page.locator("#live", { hasText: "live" }).waitFor();
      await page.locator("#page", { hasText: "1–2 of 2" }).waitFor();
      const held = await q.counts();
      await confirmVia(page, "#clean-completed", "Remove the completed jobs of cleans?", "ok");
      assert.equal(
        await page.locator("#message").textContent(),
        `Remove the completed jobs of cleans? — done (${held.completed} removed)`,
      );
      const after1 = await q.counts();
      assert.deepEqual([after1.completed, after1.dead, after1.pending], [0, held.dead, 1]);
      for (const id of good) assert.equal(Number(await server.cli("EXISTS", jobKey("cleans", id))), 0);
      await row("completed").filter({ hasText: /^0$/ }).waitFor({ timeout: 20_000 });

      await confirmVia(page, "#clean-dead", "Remove the dead jobs of cleans?", "ok");
      assert.equal(
        await page.locator("#message").textContent(),
        `Remove the dead jobs of cleans? — done (${held.dead} removed)`,
      );
      const after2 = await q.counts();
      assert.deepEqual([after2.completed, after2.dead, after2.pending], [0, 0, 1]);
      for (const id of bad) assert.equal(Number(await server.cli("EXISTS", jobKey("cleans", id))), 0);
      assert.equal((await q.getJob(waiting))?.state, "pending", "a clean leaves a pending job");
      await row("dead").filter({ hasText: /^0$/ }).waitFor({ timeout: 20_000 });
      assert.equal(await row("pending").textContent(), "1");
      assert.deepEqual(errors, [], "no console error on the page");
    } finally {
      await page.close();
      await dash.close();
    }
  });
});

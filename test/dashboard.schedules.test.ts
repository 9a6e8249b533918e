/**
 * The dashboard's schedule Pause/Resume button in a real headless Chromium, on both wires: behind
 * a confirmation, the row shows `paused` and the server's record holds it, Resume re-arms it at
 * the next instant from now; the last fired instant is the record's; a read-only dashboard shows
 * no button and refuses the POST (403); an unknown schedule answers 409 with its typed code.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startDashboard } from "../src/dashboard/server.js";
import { Queue, Worker } from "../src/index.js";
import { useBrowser, WIDE } from "./support/browser.js";
import { get, post } from "./support/dashboard-http.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const chromium = useBrowser();

forEachWire("dashboard schedule pause", (ctx) => {
  test("Pause and Resume behind a confirmation; the record holds what the row shows", async () => {
    const { conn } = ctx();
    const q = new Queue("sp", conn);
    await q.schedule("fast", { everyMs: 1000, payload: "f" });
    await q.schedule("tick", { everyMs: 60_000, payload: "t" });
    const worker = new Worker(q, async () => {}, { idleCheckMs: 50 });
    await until("fast fired", async () => (await q.schedules()).some((s) => s.lastFired !== null), 20_000);
    await q.pauseSchedule("fast"); // its last fired instant stands still
    await worker.close();
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      await page.goto(`${dash.url}#/q/sp/schedules`);
      const fast = page.locator('#schedules tr[data-schedule="fast"]');
      await fast.waitFor();
      const stored = (await q.schedules()).find((s) => s.name === "fast")!;
      assert.equal(await fast.locator(".instants").textContent(), "paused");
      assert.match((await fast.textContent()) ?? "", new RegExp(new Date(stored.lastFired!).toISOString()));

      await page.click('button[aria-label="pause schedule tick"]');
      await page.locator("#confirm[open]").waitFor();
      assert.equal(
        await page.locator("#confirm-text").textContent(),
        "Pause schedule tick of sp? It adds no job until resumed.",
      );
      await page.click("#confirm-ok");
      await page.locator('button[aria-label="resume schedule tick"]').waitFor();
      const tick = page.locator('#schedules tr[data-schedule="tick"]');
      assert.equal(await tick.locator(".instants").textContent(), "paused");
      assert.equal((await q.schedules()).find((s) => s.name === "tick")!.paused, true);

      await page.click('button[aria-label="resume schedule tick"]');
      await page.locator("#confirm[open]").waitFor();
      assert.match(
        (await page.locator("#confirm-text").textContent()) ?? "",
        /^Resume schedule tick of sp\?/,
      );
      await page.click("#confirm-ok");
      await page.locator('button[aria-label="pause schedule tick"]').waitFor();
      const armed = (await q.schedules()).find((s) => s.name === "tick")!;
      assert.equal(armed.paused, false);
      const shown = await tick.locator(".instants").textContent();
      assert.equal(shown?.split("\n")[0], new Date(armed.next).toISOString());
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }

    // An unknown schedule: 409 with the typed code.
    const open = await startDashboard(conn, { port: 0 });
    try {
      const missing = await post(open.url, "/api/queues/sp/schedules/ghost/pause");
      assert.equal(missing.status, 409);
      assert.equal(missing.body.code, "EMQ_SCHEDULE_NOT_FOUND");
    } finally {
      await open.close();
    }

    // Read-only: no button, and the POST refused with nothing written.
    const ro = await startDashboard(conn, { port: 0, readOnly: true });
    const view = await chromium.browser.newPage();
    try {
      await view.goto(`${ro.url}#/q/sp/schedules`);
      await view.locator('#schedules tr[data-schedule="tick"]').waitFor();
      assert.equal(await view.locator("#schedules button").count(), 0);
      const refused = await post(ro.url, "/api/queues/sp/schedules/tick/pause");
      assert.equal(refused.status, 403);
      assert.equal((await q.schedules()).find((s) => s.name === "tick")!.paused, false);
      const listed = await get(ro.url, "/api/queues/sp/schedules");
      assert.deepEqual(
        listed.body.schedules.map((s: { name: string; paused: boolean }) => [s.name, s.paused]),
        [
          ["tick", false],
          ["fast", true],
        ],
      );
    } finally {
      await view.close();
      await ro.close();
    }
  });
});

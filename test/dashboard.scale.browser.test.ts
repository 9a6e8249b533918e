/**
 * Many queues on a local 3-primary cluster in headless Chromium, both wires: past `sampleAll`
 * the page lists 50 queues a page (filtered by name, paged), the rows it shows are sampled each
 * time (their counts as each shard holds them), and the others show the counts of their last
 * round-robin recount, marked as such. The workers view on the cluster: a worker per shard, each read from
 * the primary its queue lives on, as `listWorkers` reads them; a closed one leaves.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startDashboard } from "../src/dashboard/server.js";
import { type Job, Queue, Worker } from "../src/index.js";
import { listWorkers } from "../src/observe/workers.js";
import { useBrowser } from "./support/browser.js";
import { queuePerShard } from "./support/cluster-helpers.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { until } from "./support/until.js";

const chromium = useBrowser();

forEachClusterWire("dashboard at scale in Chromium", (ctx) => {
  test("150 queues over three shards: 50 a page, the shown ones sampled, counts as the shards hold them", async () => {
    const { conn, wire } = ctx();
    const names = Array.from({ length: 150 }, (_, i) => `s${wire}-${String(i).padStart(3, "0")}`);
    await Promise.all(
      names.map((n, i) =>
        new Queue(n, conn).addBulk(Array.from({ length: 1 + (i % 4) }, () => ({ payload: "x" }))),
      ),
    );
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const { page, errors } = await chromium.newPage();
    const rows = page.locator("#queues tbody tr");
    try {
      await page.goto(dash.url);
      await page.locator("#queues-page", { hasText: "1–50 of 150 queues" }).waitFor();
      assert.equal(await rows.count(), 50);
      // The second page: once watched, its rows are sampled (not marked stale) and counted.
      await page.click("#queues-next");
      await page.locator("#queues-page", { hasText: "51–100 of 150 queues" }).waitFor();
      await page.locator("#queues tbody tr.stale").first().waitFor({ state: "detached", timeout: 20_000 });
      const shown = await rows.evaluateAll((rs) =>
        rs.map((r) => [
          r.getAttribute("data-queue"),
          r.querySelector('td[data-state="pending"]')?.textContent,
        ]),
      );
      const want = await Promise.all(
        names.slice(50, 100).map(async (n) => [n, String((await new Queue(n, conn).counts()).pending)]),
      );
      assert.deepEqual(shown, want);
      // Filtered by name: the queues whose name holds the text, from the first page.
      await page.fill("#queue-filter", `s${wire}-14`);
      await page.locator("#queues-page", { hasText: "1–10 of 10 queues" }).waitFor();
      assert.deepEqual(
        await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute("data-queue"))),
        names.filter((n) => n.includes(`s${wire}-14`)),
      );
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("the workers view: a worker per shard, as each primary's CLIENT LIST holds it", async () => {
    const { conn, cluster, wire } = ctx();
    const names = queuePerShard(cluster, `wv${wire}-`);
    const open: (() => void)[] = [];
    const workers = names.map(
      (n, i) =>
        new Worker(new Queue(n, conn), (_job: Job) => new Promise<void>((r) => open.push(r)), {
          concurrency: i + 2,
          idleCheckMs: 50,
        }),
    );
    await Promise.all(workers.map((w) => w.ready));
    for (const n of names) await new Queue(n, conn).add("held");
    await until("a job held per shard", () => open.length === names.length);
    const mine = async () =>
      (await listWorkers(conn)).filter((w) => w.pid === process.pid && names.includes(w.queue));
    await until("each busy slot announced", async () => (await mine()).every((w) => w.busy === 1));
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const { page, errors } = await chromium.newPage();
    try {
      await page.goto(`${dash.url}#/workers`);
      const held = await mine();
      assert.equal(new Set(held.map((w) => w.node)).size, names.length, "one primary per worker");
      for (const w of held) {
        const row = page.locator(`#workers tr[data-worker="${w.id}"]`);
        await row.waitFor();
        const cells = await row.locator("td").allTextContents();
        assert.deepEqual(
          [cells[0], cells[3], cells[4], cells[7]],
          [w.queue, String(w.concurrency), String(w.busy), w.node],
        );
      }
      for (const r of open.splice(0)) r();
      await workers[0]!.close();
      await page.locator(`#workers tr[data-worker="${held.find((w) => w.queue === names[0])!.id}"]`).waitFor({
        state: "detached",
      });
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      for (const r of open.splice(0)) r();
      await Promise.all(workers.map((w) => w.close()));
      await page.close();
      await dash.close();
    }
  });
});

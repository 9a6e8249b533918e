/**
 * The page among 300 queues on one node, both wires, in headless Chromium: the first page of
 * queues drawn (the `echomq:queues` and `echomq:live` performance marks set), its rows' counts
 * as the server holds them, the rows off screen said as counted some time ago (or not yet: no
 * number shown), with one sample only so that nothing races what is asserted; the page's files
 * under a versioned path, cached as immutable with an ETag (304 on a match, taken from the
 * browser's cache on a reload), the guard's headers and Host check on that path too. On a local
 * 3-primary cluster (both wires): 200 queues and a queue of 16 lanes, the marks set and the first
 * page's rows as the server holds them (the laned queue summed over its lanes).
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { startDashboard } from "../src/dashboard/server.js";
import { type JobState, Queue } from "../src/index.js";
import { useBrowser } from "./support/browser.js";
import { forEachClusterWire } from "./support/cluster-wires.js";
import { raw } from "./support/raw-http.js";
import { forEachWire } from "./support/wires.js";

const STATES: JobState[] = ["pending", "scheduled", "active", "completed", "dead", "waiting"];

/** The queue rows on screen: each name and its count per state, as the cells read. */
const onScreen = (page: Page) =>
  page
    .locator("#queues tbody tr")
    .evaluateAll(
      (rs, states) =>
        rs.map((r) => [
          r.getAttribute("data-queue"),
          ...states.map((s) => r.querySelector(`td[data-state="${s}"]`)?.textContent),
        ]),
      STATES,
    );

const chromium = useBrowser();

forEachWire("dashboard page among many queues", (ctx) => {
  test("300 queues: the first 50 drawn with the server's counts, marks set, the others counted earlier", async () => {
    const { conn, wire } = ctx();
    const names = Array.from({ length: 300 }, (_, i) => `p${wire}-${String(i).padStart(3, "0")}`);
    await Promise.all(
      names.map((n, i) =>
        new Queue(n, conn).addBulk(Array.from({ length: 1 + (i % 3) }, () => ({ payload: "x" }))),
      ),
    );
    await new Queue(names[1]!, conn).add("later", { delay: 60_000 });
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const { page, errors } = await chromium.newPage();
    const rows = page.locator("#queues tbody tr");
    try {
      await page.goto(dash.url);
      await page.locator("#queues-page", { hasText: "1–50 of 300 queues" }).waitFor();
      await page.waitForFunction(() =>
        ["echomq:queues", "echomq:live"].every((m) => performance.getEntriesByName(m).length === 1),
      );
      const marks = await page.evaluate(() =>
        ["echomq:queues", "echomq:live"].map((m) => performance.getEntriesByName(m)[0]!.startTime),
      );
      assert.ok(marks[0]! > 0 && marks[0]! <= marks[1]!, `the table drawn, then live: ${marks.join(", ")}`);
      // Its rows watched, then sampled each time: no row said as counted earlier.
      await page.locator("#queues tbody tr.stale").first().waitFor({ state: "detached", timeout: 20_000 });
      const shown = await onScreen(page);
      const want = await Promise.all(
        names.slice(0, 50).map(async (n) => {
          const c = await new Queue(n, conn).counts();
          return [n, ...STATES.map((s) => String(c[s]))];
        }),
      );
      assert.deepEqual(shown, want);
      assert.equal(shown[1]![2], "1", "the delayed job counted as scheduled");
      // The last page: off screen until now, its rows say when they were counted (or that they were not).
      await page.fill("#queue-filter", `p${wire}-29`);
      await page.locator("#queues-page", { hasText: "1–10 of 10 queues" }).waitFor();
      const first = await rows.first().evaluate((r) => [r.className, r.getAttribute("title")]);
      if (first[0]!.includes("stale"))
        assert.match(first[1]!, /^p\d-290: (counted .* ago|not counted yet), not followed live$/);
      await page.locator("#queues tbody tr.stale").first().waitFor({ state: "detached", timeout: 20_000 });
      // A reload takes the page's files from the browser's cache (immutable), the page itself anew.
      await page.reload();
      await page.waitForFunction(() => performance.getEntriesByName("echomq:queues").length === 1);
      const fetched = await page.evaluate(() =>
        performance
          .getEntriesByType("resource")
          .map((e) => e as unknown as { name: string; transferSize: number })
          .filter((e) => /\/v\/[0-9a-f]+\//.test(e.name))
          .map((e) => [new URL(e.name).pathname.split("/").pop(), e.transferSize]),
      );
      assert.ok(fetched.length >= 9, `the stylesheet and the scripts, versioned: ${JSON.stringify(fetched)}`);
      assert.deepEqual(
        fetched.filter(([, size]) => size !== 0),
        [],
        "every versioned file from the cache on a reload",
      );
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("one sample only (at the start): off-screen rows say when they were counted, or that they were not", async () => {
    const { conn, wire } = ctx();
    const names = Array.from({ length: 120 }, (_, i) => `o${wire}-${String(i).padStart(3, "0")}`);
    await Promise.all(
      names.map((n, i) =>
        new Queue(n, conn).addBulk(Array.from({ length: 1 + (i % 3) }, () => ({ payload: "x" }))),
      ),
    );
    // The longest interval: the first sample is the only one this test sees, its page not yet shown.
    const dash = await startDashboard(conn, { port: 0, sampleMs: 3_600_000 });
    const { page, errors } = await chromium.newPage();
    const rows = page.locator("#queues tbody tr");
    const read = () =>
      rows.evaluateAll((rs) =>
        rs.map((r) => ({
          stale: r.classList.contains("stale"),
          title: r.getAttribute("title"),
          pending: r.querySelector('td[data-state="pending"]')?.textContent,
          oldest: r.querySelectorAll("td")[7]?.textContent,
        })),
      );
    try {
      await page.goto(dash.url);
      await page.locator("#queues-page", { hasText: "1–50 of 120 queues" }).waitFor();
      const first = await read();
      const counted = await Promise.all(
        names.slice(0, 50).map(async (n) => (await new Queue(n, conn).counts()).pending),
      );
      assert.deepEqual(
        first.map((r) => r.pending),
        counted.map(String),
        "the counts of the first sample's recount, as the server holds them",
      );
      for (const [i, r] of first.entries()) {
        assert.equal(r.stale, true, names[i]);
        assert.match(r.title!, new RegExp(`^${names[i]}: counted .+ ago, not followed live$`));
        assert.equal(r.oldest, "—", "no oldest-pending age for a queue not followed");
      }
      await page.click("#queues-next");
      await page.locator("#queues-page", { hasText: "51–100 of 120 queues" }).waitFor();
      const second = await read();
      assert.deepEqual(
        second.map((r) => [r.stale, r.pending, r.title]),
        names.slice(50, 100).map((n) => [true, "…", `${n}: not counted yet, not followed live`]),
        "never counted: no number shown",
      );
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("the versioned files: immutable with an ETag, 304 on a match, the guard's headers and Host check", async () => {
    const { conn } = ctx();
    const dash = await startDashboard(conn, { port: 0, sampleMs: 1000 });
    const { port } = new URL(dash.url);
    const at = (path: string) => new URL(path, dash.url).href;
    try {
      const home = await raw(at("/"));
      assert.equal(home.headers["cache-control"], "no-store");
      const path = /<script type="module" src="(v\/[0-9a-f]{16}\/app\.js)">/.exec(home.body)?.[1];
      assert.ok(path, "the page names its script under a versioned path");
      const script = await raw(at(`/${path}`));
      assert.equal(script.status, 200);
      assert.equal(script.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.equal(script.headers["content-type"], "text/javascript; charset=utf-8");
      assert.equal(
        script.body,
        await readFile(new URL("../src/dashboard/public/app.js", import.meta.url), "utf8"),
      );
      const etag = script.headers.etag as string;
      assert.match(etag, /^"[0-9a-f]{16}"$/);
      const again = await raw(at(`/${path}`), { headers: { "if-none-match": etag } });
      assert.deepEqual([again.status, again.body, again.headers.etag], [304, "", etag]);
      const other = await raw(at(`/${path}`), { headers: { "if-none-match": '"0000000000000000"' } });
      assert.equal(other.status, 200);
      for (const h of [
        "content-security-policy",
        "x-frame-options",
        "x-content-type-options",
        "referrer-policy",
      ]) {
        assert.ok(home.headers[h], h);
        assert.equal(script.headers[h], home.headers[h], `${h} on the versioned path`);
        assert.equal(again.headers[h], home.headers[h], `${h} on a 304`);
      }
      const stale = await raw(at("/v/0123456789abcdef/app.js"));
      assert.equal(stale.status, 404, "another version's path is not this dashboard's");
      const rebound = await raw(at(`/${path}`), {
        headers: { host: `evil.example:${port}`, "if-none-match": etag },
      });
      assert.equal(rebound.status, 403);
      assert.match(rebound.json.error, /^refused: Host "evil\.example:\d+" is not this dashboard's/);
    } finally {
      await dash.close();
    }
  });
});

forEachClusterWire("dashboard page among many queues, on a cluster", (ctx) => {
  test("200 queues and a queue of 16 lanes over 3 shards: marks set, the first page as the server holds it", async () => {
    const { conn, wire } = ctx();
    const names = Array.from({ length: 200 }, (_, i) => `c${wire}-${String(i).padStart(3, "0")}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names
          .slice(i, i + 50)
          .map((n, k) =>
            new Queue(n, conn).addBulk(Array.from({ length: 1 + ((i + k) % 3) }, () => ({ payload: "x" }))),
          ),
      );
    }
    // Sorted right after the first queue: on the first page.
    const laned = `c${wire}-000-lanes`;
    await new Queue(laned, conn, { lanes: 16 }).addBulk(Array.from({ length: 40 }, () => ({ payload: "w" })));
    await new Queue(laned, conn, { lanes: 16 }).add("later", { delay: 60_000 });
    const dash = await startDashboard(conn, { port: 0, sampleMs: 200 });
    const { page, errors } = await chromium.newPage();
    try {
      await page.goto(dash.url);
      await page.locator("#queues-page", { hasText: `1–50 of ${names.length + 1} queues` }).waitFor();
      await page.waitForFunction(() =>
        ["echomq:queues", "echomq:live"].every((m) => performance.getEntriesByName(m).length === 1),
      );
      const marks = await page.evaluate(() =>
        ["echomq:queues", "echomq:live"].map((m) => performance.getEntriesByName(m)[0]!.startTime),
      );
      assert.ok(marks[0]! > 0 && marks[0]! <= marks[1]!, `the table drawn, then live: ${marks.join(", ")}`);
      await page.locator("#queues tbody tr.stale").first().waitFor({ state: "detached", timeout: 30_000 });
      const first = [names[0]!, laned, ...names.slice(1, 49)];
      const want = await Promise.all(
        first.map(async (n) => {
          const c = await new Queue(n, conn, n === laned ? { lanes: 16 } : {}).counts();
          return [n, ...STATES.map((s) => String(c[s]))];
        }),
      );
      assert.deepEqual(await onScreen(page), want);
      assert.deepEqual(want[1]!.slice(1, 3), ["40", "1"], "the laned queue summed over its 16 lanes");
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });
});

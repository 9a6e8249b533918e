/**
 * The operator's console in a real headless Chromium, on both wires: deep links (a filtered,
 * paged list and a job each have their own address; reload and history keep the place), search
 * by idempotency key and by payload text, and a job's times and lease — each figure checked
 * against what the server holds. With `ECHOMQ_SCREENSHOTS=<dir>` it shots the schedules, flow,
 * flow-control and bulk-confirmation views there (how `docs/dashboard-*.png` are made).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { startDashboard } from "../src/dashboard/server.js";
import { FlowProducer } from "../src/flows/producer.js";
import { type Job, Queue, Worker } from "../src/index.js";
import { useBrowser, WIDE } from "./support/browser.js";
import { shot } from "./support/shots.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const chromium = useBrowser();

const ids = (page: Page) =>
  page.locator("#jobs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id")));
const field = (page: Page, name: string) => page.locator(`dd[data-field="${name}"]`);
const score = async (q: Queue, set: string, id: string) =>
  Number(String(await q.connection.send("ZSCORE", [`emq:{${q.name}}:${set}`, id])));

forEachWire("dashboard console in Chromium", (ctx) => {
  test("deep links, search by key and by payload, a job's times and its lease", async () => {
    const { conn } = ctx();
    const q = new Queue("links", conn);
    const added = await q.addBulk(
      Array.from({ length: 25 }, (_, i) => ({
        payload: JSON.stringify({ order: i }),
        opts: { key: `k-${i}` },
      })),
    );
    const worker = new Worker(
      q,
      async () => {
        throw new Error("declined");
      },
      { attempts: 1, idleCheckMs: 50 },
    );
    await until("25 dead", async () => (await q.counts()).dead === 25, 20_000);
    await worker.close();
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      // A deep link to the second page of the dead jobs; reload keeps it.
      await page.goto(`${dash.url}#/q/links?state=dead&offset=20`);
      await page.locator("#page", { hasText: "21–25 of 25" }).waitFor();
      const newestFirst = [...added].reverse().map((r) => r.id);
      assert.deepEqual(new Set(await ids(page)), new Set(newestFirst.slice(20)));
      await page.reload();
      await page.locator("#page", { hasText: "21–25 of 25" }).waitFor();

      // A job has its own address; back returns to the list where it was.
      const open = (await ids(page))[0]!;
      await page.locator(`#jobs tr[data-id="${open}"]`).click();
      await page.locator("#job-id", { hasText: open }).waitFor();
      assert.match(page.url(), new RegExp(`#/q/links/job/${open}\\?state=dead&offset=20$`));
      await page.reload();
      await page.locator("#job-id", { hasText: open }).waitFor();
      const row = await q.getJob(open);
      assert.equal(await field(page, "state").textContent(), "dead");
      assert.equal(
        await field(page, "finished").textContent(),
        new Date(await score(q, "dead", open)).toISOString(),
      );
      const started = Date.parse((await field(page, "started").textContent())!);
      assert.ok(started <= (await score(q, "dead", open)), "started before it finished");
      assert.equal(await page.locator("#job-error").textContent(), row!.error);
      await page.goBack();
      await page.locator("#job").waitFor({ state: "hidden" });
      await page.locator("#page", { hasText: "21–25 of 25" }).waitFor();

      // By idempotency key: the job added with it.
      await page.selectOption("#search-by", "key");
      await page.fill("#search-text", "k-7");
      await page.click("#search button");
      await page.locator("#job-id", { hasText: added[7]!.id }).waitFor();
      await page.fill("#search-text", "k-none");
      await page.click("#search button");
      await page.locator("#message", { hasText: 'no job holds idempotency key "k-none" in links' }).waitFor();

      // By payload text, within the state: what the test finds in the payloads itself.
      await page.goto(`${dash.url}#/q/links?state=dead`);
      await page.selectOption("#search-by", "text");
      await page.fill("#search-text", '"order":1');
      await page.click("#search button");
      const want = added
        .filter((_, i) => JSON.stringify({ order: i }).includes('"order":1'))
        .map((r) => r.id);
      await page.locator("#page", { hasText: `${want.length} with` }).waitFor();
      assert.deepEqual(new Set(await ids(page)), new Set(want));
      assert.match(page.url(), /text=%22order%22%3A1/);

      // An active job: who holds it (its lease token) and until when.
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const active = await q.add("slow");
      const holder = new Worker(q, (_job: Job) => held, { idleCheckMs: 50 });
      await until("claimed", async () => (await q.getJob(active.id))?.state === "active");
      // The bus trimmed to nothing: the start is the row's, when its lease was granted.
      const bus = "emq:{links}:events";
      await q.connection.send("XTRIM", [bus, "MAXLEN", "0"], bus);
      await page.goto(`${dash.url}#/q/links/job/${active.id}?state=active`);
      await page.locator('dd[data-field="held by"]').waitFor();
      const leased = (await q.getJob(active.id))!;
      const token = leased.attempts;
      assert.equal(await field(page, "held by").textContent(), `the worker holding lease token ${token}`);
      assert.equal(
        await field(page, "held since").textContent(),
        new Date(leased.processedOn!).toISOString(),
      );
      assert.equal(await field(page, "started").textContent(), new Date(leased.processedOn!).toISOString());
      assert.equal(
        await field(page, "lease until").textContent(),
        new Date(await score(q, "active", active.id)).toISOString(),
      );
      release();
      await holder.close();
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("bulk actions: selected and all of a state, one confirmation with the count, in pages", async () => {
    const { conn } = ctx();
    const q = new Queue("bulk", conn);
    await q.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: `die ${i}` })));
    const killer = new Worker(
      q,
      async () => {
        throw new Error("no");
      },
      { attempts: 1, idleCheckMs: 50 },
    );
    await until("6 dead", async () => (await q.counts()).dead === 6, 20_000);
    await killer.close();
    await q.addBulk(
      Array.from({ length: 3 }, (_, i) => ({ payload: `later ${i}`, opts: { delay: 3_600_000 } })),
    );
    await q.addBulk(Array.from({ length: 105 }, (_, i) => ({ payload: `p ${i}` })));
    const expect = { pending: 105, scheduled: 3, dead: 6 };
    const counts = async () => {
      const c = await q.counts();
      return { pending: c.pending, scheduled: c.scheduled, dead: c.dead };
    };
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    let bulkCalls = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/queues/bulk/bulk")) bulkCalls++;
    });
    const confirm = async (text: string, ok = true, name = "") => {
      await page.locator("#confirm[open]").waitFor();
      assert.equal(await page.locator("#confirm-text").textContent(), text);
      if (name) await shot(page, name, ctx().wire);
      await page.click(ok ? "#confirm-ok" : "#confirm-cancel");
    };
    try {
      await page.goto(`${dash.url}#/q/bulk?state=dead`);
      await page.locator("#page", { hasText: "1–6 of 6" }).waitFor();
      const boxes = page.locator('#jobs tbody input[type="checkbox"]');
      await boxes.nth(0).check();
      await boxes.nth(3).check();
      await page.locator("#selected-count", { hasText: "2 selected" }).waitFor();
      await page.click("#bulk-retry");
      await confirm("Retry 2 selected jobs of bulk?");
      await page.locator("#message", { hasText: "Retry: 2 of 2 done" }).waitFor();
      expect.dead -= 2;
      expect.pending += 2;
      assert.deepEqual(await counts(), expect);

      await page.locator("#page", { hasText: `1–${expect.dead} of ${expect.dead}` }).waitFor();
      // The live counts caught up too (the next sample): the picture of the confirmation agrees.
      await page.locator('#states button[data-state="dead"]', { hasText: `dead (${expect.dead})` }).waitFor();
      await page.click("#all-retry");
      await confirm(`Retry all ${expect.dead} dead jobs of bulk?`, true, "bulk-confirm");
      await page.locator("#message", { hasText: `Retry: ${expect.dead} of ${expect.dead} done` }).waitFor();
      expect.pending += expect.dead;
      expect.dead = 0;
      assert.deepEqual(await counts(), expect);

      await page.goto(`${dash.url}#/q/bulk?state=scheduled`);
      await page.locator("#page", { hasText: "1–3 of 3" }).waitFor();
      await page.click("#all-promote");
      await confirm("Promote all 3 scheduled jobs of bulk?");
      await page.locator("#message", { hasText: "Promote: 3 of 3 done" }).waitFor();
      expect.pending += 3;
      expect.scheduled = 0;
      assert.deepEqual(await counts(), expect);

      await page.goto(`${dash.url}#/q/bulk?state=pending`);
      await page.locator("#page", { hasText: `of ${expect.pending}` }).waitFor();
      await page.click("#all-remove");
      await confirm(`Remove all ${expect.pending} pending jobs of bulk?`, false);
      assert.deepEqual(await counts(), expect, "a cancelled confirmation did nothing");
      bulkCalls = 0;
      await page.click("#all-remove");
      await confirm(`Remove all ${expect.pending} pending jobs of bulk?`);
      await page
        .locator("#message", { hasText: `Remove: ${expect.pending} of ${expect.pending} done` })
        .waitFor();
      assert.ok(bulkCalls > 1, `${expect.pending} jobs removed in several bounded requests (${bulkCalls})`);
      expect.pending = 0;
      assert.deepEqual(await counts(), expect);
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("the last hour per minute, kept by the dashboard: a reload draws the same", async () => {
    const { conn } = ctx();
    const q = new Queue("hourly", conn);
    await q.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: i < 2 ? "flaky" : "fine" })));
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100 });
    const { page, errors } = await chromium.newPage(WIDE);
    const seen = new Set<string>();
    try {
      await fetch(new URL("/api/queues", dash.url)); // the bus's position taken: count from here
      const worker = new Worker(
        q,
        async (job: Job) => {
          if (job.text() === "flaky" && !seen.has(job.id)) {
            seen.add(job.id);
            throw new Error("once");
          }
        },
        { attempts: 2, backoff: { type: "fixed", delayMs: 0 }, idleCheckMs: 50 },
      );
      await until("5 completed", async () => (await q.counts()).completed === 5, 20_000);
      await worker.close();
      const counted = async () =>
        ((await (await fetch(new URL("/api/queues", dash.url))).json()) as any).queues.find(
          (x: { name: string }) => x.name === "hourly",
        ).counted;
      await until("the sampler counted them", async () => (await counted()).completed === 5, 20_000);
      for (const load of ["first", "reload"]) {
        if (load === "first") await page.goto(`${dash.url}#/q/hourly`);
        else await page.reload();
        await page.locator('#hour-completed[data-total="5"]').waitFor();
        assert.equal(await page.locator("#hour-failed").getAttribute("data-total"), String(seen.size), load);
        assert.match(
          (await page.locator("#hour-completed svg").getAttribute("aria-label")) ?? "",
          /^completed per minute, last hour: 5 in all, at most [1-5] a minute$/,
        );
      }
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      await page.close();
      await dash.close();
    }
  });

  test("schedules, a flow's parent and children, flow control: as the server holds them", async () => {
    const { conn } = ctx();
    const q = new Queue("extras", conn);
    await q.schedule("tick", { everyMs: 60_000, payload: "t" });
    const [stored] = await q.schedules();
    const flow = await new FlowProducer(conn).add({
      queue: "extras",
      payload: "parent",
      children: [
        { queue: "kids-a", payload: "a" },
        { queue: "kids-b", payload: "b" },
      ],
    });
    const [childA, childB] = flow.children;
    const kids = new Worker(new Queue("kids-a", conn), async () => "made a", { idleCheckMs: 50 });
    await until("a child settled", async () => (await q.getJob(flow.id))?.childrenLeft === 1, 20_000);
    await kids.close();
    await q.setLimits({ group: { concurrency: 1 } });
    const grouped = await q.addBulk(
      Array.from({ length: 3 }, (_, i) => ({ payload: `g${i}`, opts: { group: "g" } })),
    );
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const holder = new Worker(q, (job: Job) => (job.text().startsWith("g") ? held : undefined), {
      concurrency: 3,
      idleCheckMs: 50,
    });
    await until(
      "1 active, 2 parked",
      async () => JSON.stringify(await q.groups()) === '{"g":{"active":1,"parked":2}}',
    );
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    try {
      // Schedules: the next instants the test computes from the spec, then removed through the page.
      await page.goto(`${dash.url}#/q/extras/schedules`);
      const row = page.locator('#schedules tr[data-schedule="tick"]');
      await row.waitFor();
      await shot(page, "schedules", ctx().wire);
      // from the stored next instant, or the one after it when the schedule fired at a minute's turn
      // between the read and the page's
      const shown = await row.locator(".instants").textContent();
      const from = (start: number) =>
        Array.from({ length: 5 }, (_, i) => new Date(start + i * 60_000).toISOString()).join("\n");
      assert.ok(
        [from(stored!.next), from(stored!.next + 60_000)].includes(shown ?? ""),
        `instants shown: ${shown}`,
      );
      const fired = await row.locator('[data-field="fired"]').textContent();
      const turned = shown !== from(stored!.next);
      assert.equal(fired, String(stored!.fired + (turned ? 1 : 0)));
      await page.click('button[aria-label="remove schedule tick"]');
      await page.locator("#confirm[open]").waitFor();
      assert.equal(await page.locator("#confirm-text").textContent(), "Remove schedule tick of extras?");
      await page.click("#confirm-ok");
      await page.locator("#schedules-none").waitFor();
      assert.deepEqual(await q.schedules(), []);

      // The flow: the parent lists the settled child with its state and result, and the one left
      // (found by the bounded scan) with its state now.
      await page.goto(`${dash.url}#/q/extras/job/${flow.id}`);
      await page.locator(`#job-children tr[data-child="${childA!.id}"]`).waitFor();
      assert.match(
        (await page.locator("#job-children-left").textContent())!,
        /^1 not settled yet \(1 found in \d+ queues?, \d+ jobs read\), 1 settled$/,
      );
      await shot(page, "flow", ctx().wire);
      const left = page.locator(`#job-children tr[data-child="${childB!.id}"]`);
      assert.equal(await left.getAttribute("data-settled"), "no");
      assert.equal(
        await left.locator('[data-field="state"]').textContent(),
        (await new Queue("kids-b", conn).getJob(childB!.id))!.state,
      );
      assert.equal(
        await page.locator(`#job-children tr[data-child="${childA!.id}"] [data-field="state"]`).textContent(),
        (await new Queue("kids-a", conn).getJob(childA!.id))!.state,
      );
      // A child links to its parent.
      await page.goto(`${dash.url}#/q/kids-b/job/${childB!.id}`);
      await page.locator("#job-parent a", { hasText: flow.id }).click();
      await page.locator("#job-id", { hasText: flow.id }).waitFor();

      // Flow control: the limits stored, the group with its active and parked jobs.
      await page.goto(`${dash.url}#/q/extras/limits`);
      const group = page.locator('#groups tr[data-group="g"]');
      await group.waitFor();
      await shot(page, "flow-control", ctx().wire);
      const groups = await q.groups();
      assert.equal(await group.locator('[data-field="active"]').textContent(), String(groups.g!.active));
      assert.equal(await group.locator('[data-field="parked"]').textContent(), String(groups.g!.parked));
      const parked = await group.locator('[data-field="parked-ids"] a').allTextContents();
      const active = (await q.getJobs("active")).map((j) => j.id);
      assert.deepEqual(
        new Set(parked),
        new Set(grouped.map((r) => r.id).filter((id) => !active.includes(id))),
      );
      assert.equal(
        await page.locator('dd[data-field="group defaults"]').textContent(),
        JSON.stringify((await q.limits()).group),
      );
      assert.deepEqual(errors, [], "no console errors");
    } finally {
      release();
      await holder.close();
      await page.close();
      await dash.close();
    }
  });

  test("accessibility: every control named in Chromium's accessibility tree, keyboard navigation, no console errors", async () => {
    const { conn } = ctx();
    const q = new Queue("keys", conn);
    const { id } = await q.add("k");
    await q.schedule("nightly", { cron: "0 3 * * *", payload: "n" });
    const dash = await startDashboard(conn, { port: 0 });
    const { page, errors } = await chromium.newPage(WIDE);
    const cdp = await page.context().newCDPSession(page);
    /** The controls the accessibility tree holds without a name. */
    const unnamed = async () => {
      const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as {
        nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[];
      };
      const controls = ["button", "textbox", "combobox", "checkbox", "link", "searchbox"];
      const shown = nodes.filter((n) => !n.ignored && controls.includes(n.role?.value ?? ""));
      assert.ok(shown.length >= 3, "the tree holds the page's controls");
      return shown.filter((n) => !n.name?.value).map((n) => n.role?.value);
    };
    try {
      await page.goto(dash.url);
      await page.locator('#queues tr[data-queue="keys"]').waitFor();
      // Keyboard only: the queue's row holds a link (Tab reaches it), Enter opens it; then its
      // job the same way — from the row's checkbox, Tab goes on to the job's link.
      await page.locator('#queues tr[data-queue="keys"] a').focus();
      // The live stream redraws the table under the keyboard: the focus stays on the queue's link.
      await page.evaluate(() => {
        (globalThis as any).document.querySelector('#queues tr[data-queue="keys"]').dataset.drawn = "before";
      });
      await page.waitForFunction(
        () => !(globalThis as any).document.querySelector('#queues tr[data-queue="keys"]')?.dataset.drawn,
        undefined,
        { timeout: 20_000 },
      );
      assert.equal(
        await page.evaluate(() => {
          const el = (globalThis as any).document.activeElement;
          return `${el?.tagName} in ${el?.closest("tr")?.dataset.queue}`;
        }),
        "A in keys",
        "focus held through a live redraw",
      );
      await page.keyboard.press("Enter");
      await page.locator(`#jobs tr[data-id="${id}"]`).waitFor();
      assert.match(page.url(), /#\/q\/keys\?state=pending$/);
      await page.locator(`#jobs tr[data-id="${id}"] input[type=checkbox]`).focus();
      await page.keyboard.press("Tab");
      assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), id);
      await page.keyboard.press("Enter");
      await page.locator("#job-id", { hasText: id }).waitFor();
      for (const where of [
        "",
        "#/q/keys?state=pending",
        `#/q/keys/job/${id}`,
        "#/q/keys/schedules",
        "#/q/keys/limits",
      ]) {
        await page.goto(`${dash.url}${where}`);
        await page.locator("#live", { hasText: "live" }).waitFor();
        assert.deepEqual(await unnamed(), [], `every control named on ${where || "the queues"}`);
      }
      assert.deepEqual(errors, [], "no console errors on any page");
    } finally {
      await page.close();
      await dash.close();
    }
  });
});

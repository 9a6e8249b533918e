/**
 * The dashboard at scale: 1,000 queues and a laned queue of 64 lanes on a local 3-primary
 * cluster, per wire. Measures the page's load (headless Chromium: from navigation to the first
 * 50 queue rows shown, with live counts) and what the dashboard's sampling costs the servers —
 * commands per second and Valkey CPU (`INFO commandstats`, `INFO cpu`, summed over the
 * primaries) over `seconds` with the page open (its 50 rows watched), then with every queue
 * watched (each sampled each second) for comparison.
 *
 *   npx tsx bench/dashboard.ts [queues=1000] [seconds=10] [wire: 4 or 6, default both]
 *
 * Not part of `npm test`; bounded (it stops after the two windows per wire).
 */
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { chromium } from "playwright-core";
import { startDashboard } from "../src/dashboard/server.js";
import { installModuleBrand } from "../src/admin.js";
import { connect, Queue, type Wire } from "../src/index.js";
import { startCluster } from "../test/support/cluster.js";
import { modulePath } from "../tools/module-path.js";
import { parseInfo } from "./server.js";

const QUEUES = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 10);
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

type Cli = (...args: string[]) => Promise<unknown>;

/** Commands run (INFO left out) and CPU seconds used, summed over `nodes`. */
async function load(nodes: { cli: Cli }[]): Promise<{ calls: number; cpu: number }> {
  let calls = 0;
  let cpu = 0;
  for (const n of nodes) {
    const stats = String(await n.cli("INFO", "commandstats"));
    for (const m of stats.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm))
      if (m[1] !== "info") calls += Number(m[2]);
    const info = parseInfo(String(await n.cli("INFO", "cpu")));
    cpu += Number(info.get("used_cpu_user")) + Number(info.get("used_cpu_sys"));
  }
  return { calls, cpu };
}

async function window(nodes: { cli: Cli }[]): Promise<{ commandsPerSec: number; cpuPercent: number }> {
  const a = await load(nodes);
  const t = performance.now();
  await sleep(SECONDS * 1000);
  const b = await load(nodes);
  const s = (performance.now() - t) / 1000;
  return {
    commandsPerSec: Math.round((b.calls - a.calls) / s),
    cpuPercent: Math.round(((b.cpu - a.cpu) / s) * 1000) / 10,
  };
}

async function run(wire: Wire) {
  const cluster = await startCluster({ primaries: 3, ...(wire === 6 ? { module: modulePath() } : {}) });
  if (wire === 6) await installModuleBrand({ nodes: cluster.seeds });
  const conn = await connect({ nodes: [...cluster.seeds], wire });
  const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox"] });
  try {
    const names = Array.from({ length: QUEUES }, (_, i) => `q${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 100) {
      await Promise.all(names.slice(i, i + 100).map((n) => new Queue(n, conn).add("x")));
    }
    await new Queue("wide", conn, { lanes: 64 }).addBulk(
      Array.from({ length: 640 }, () => ({ payload: "w" })),
    );
    const primaries = cluster.primaries();
    const result: Record<string, unknown> = { wire, queues: QUEUES + 1 };
    // The page open: its 50 rows watched, the others counted at each discovery (every 10 s).
    const dash = await startDashboard(conn, { port: 0, sampleMs: 1000 });
    await fetch(new URL("/api/queues", dash.url)); // the first discovery
    const page = await browser.newPage();
    const t = performance.now();
    await page.goto(dash.url);
    await page.locator("#queues tbody tr").nth(49).waitFor();
    result.pageLoadMs = Math.round(performance.now() - t);
    // What the first load waited on: the page's requests, each with when it ended (ms from navigation).
    result.firstLoad = await page.evaluate(() => {
      const g = globalThis as any;
      const nav = g.performance.getEntriesByType("navigation")[0];
      const rows = g.performance
        .getEntriesByType("resource")
        .map(
          (e: any) =>
            `${new URL(e.name).pathname}${new URL(e.name).search ? "?…" : ""} ${Math.round(e.responseEnd)}`,
        );
      return [`document ${Math.round(nav.responseEnd)}`, ...rows];
    });
    const again = performance.now();
    await page.reload();
    await page.locator("#queues tbody tr").nth(49).waitFor();
    result.reloadMs = Math.round(performance.now() - again);
    result.shown = await window(primaries);
    // For comparison: every queue watched (as if a page showed them all), each sampled each second.
    for (let i = 0; i < names.length; i += 200) {
      const query = names
        .slice(i, i + 200)
        .map((n) => `q=${n}`)
        .join("&");
      await fetch(new URL(`/api/watch?${query}&q=wide`, dash.url));
    }
    result.everyQueue = await window(primaries);
    await page.close();
    await dash.close();
    return result;
  } finally {
    await browser.close();
    await conn.close();
    await cluster.stop();
  }
}

const wires = process.argv[4] ? [Number(process.argv[4]) as Wire] : ([4, 6] as const);
for (const wire of wires) console.log(JSON.stringify(await run(wire)));

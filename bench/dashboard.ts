/**
 * The dashboard at scale: 1,000 queues (a job each) and a laned queue of 64 lanes on a local
 * 3-primary cluster, per wire. For each dashboard measured — this tree's, and any other
 * checkout's named with `--before <dir>` (e.g. main's: `git worktree add --detach
 * /tmp/dash-before main`, node_modules linked), both against the same cluster and queues — it
 * measures in headless Chromium the first load and a reload (each from navigation to the first
 * 50 queue rows drawn and the live badge on; medians of `trials`, a fresh browser profile per
 * first load), then what the sampling costs the servers with the page open: commands per second
 * and Valkey CPU (`INFO commandstats` and `INFO cpu` deltas summed over the primaries) over
 * `seconds`, and the most commands of one of its seconds (read each second: a burst). The machine's load average is printed beside each row.
 *
 *   npx tsx bench/dashboard.ts [--queues 1000] [--seconds 10] [--trials 3] [--wire 4|6] [--before <dir>]
 *   npm run bench:dashboard -- --before /tmp/dash-before
 *
 * Not part of `npm test`; bounded (it stops after its windows).
 */
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { type Browser, chromium } from "playwright-core";
import { installModuleBrand } from "../src/admin.js";
import { connect, Queue, type Wire } from "../src/index.js";
import { startCluster } from "../test/support/cluster.js";
import { modulePath } from "../tools/module-path.js";
import { parseInfo } from "./server.js";

const { values: args } = parseArgs({
  options: {
    queues: { type: "string", default: "1000" },
    seconds: { type: "string", default: "10" },
    trials: { type: "string", default: "3" },
    wire: { type: "string" },
    before: { type: "string" },
  },
});
const QUEUES = Number(args.queues);
const SECONDS = Number(args.seconds);
const TRIALS = Number(args.trials);
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const HERE = resolve(import.meta.dirname, "..");

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

/** Over `SECONDS`: commands per second and CPU, and the most commands of one second (a burst). */
async function window(
  nodes: { cli: Cli }[],
): Promise<{ commandsPerSec: number; peakCommandsPerSec: number; cpuPercent: number }> {
  const a = await load(nodes);
  const t = performance.now();
  let last = a;
  let lastAt = t;
  let peak = 0;
  while (performance.now() - t < SECONDS * 1000) {
    await sleep(1000);
    const now = await load(nodes);
    const at = performance.now();
    peak = Math.max(peak, (now.calls - last.calls) / ((at - lastAt) / 1000));
    last = now;
    lastAt = at;
  }
  const s = (lastAt - t) / 1000;
  return {
    commandsPerSec: Math.round((last.calls - a.calls) / s),
    peakCommandsPerSec: Math.round(peak),
    cpuPercent: Math.round(((last.cpu - a.cpu) / s) * 1000) / 10,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** Navigation to the first 50 rows drawn and the live badge on, ms. */
async function shown(page: import("playwright-core").Page, go: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await go();
  await page.locator("#queues tbody tr").nth(49).waitFor();
  await page.locator("#live", { hasText: /^live$/ }).waitFor();
  return Math.round(performance.now() - t);
}

/** One dashboard (the tree at `root`) against the cluster: its loads, then its sampling's cost. */
async function measure(root: string, wire: Wire, seeds: unknown[], nodes: { cli: Cli }[], browser: Browser) {
  const { connect: connectOf } = await import(`${root}/src/index.ts`);
  const { startDashboard } = await import(`${root}/src/dashboard/server.ts`);
  const conn = await connectOf({ nodes: seeds, wire });
  const dash = await startDashboard(conn, { port: 0, sampleMs: 1000 });
  try {
    const loads: number[] = [];
    const reloads: number[] = [];
    let marks: number[] | null = null;
    for (let i = 0; i < TRIALS; i++) {
      const context = await browser.newContext(); // an empty cache: a first visit
      const page = await context.newPage();
      loads.push(await shown(page, () => page.goto(dash.url)));
      reloads.push(await shown(page, () => page.reload()));
      marks = await page.evaluate(() =>
        ["echomq:queues", "echomq:live"].every((m) => performance.getEntriesByName(m).length > 0)
          ? ["echomq:queues", "echomq:live"].map((m) =>
              Math.round(performance.getEntriesByName(m)[0]!.startTime),
            )
          : null,
      );
      await context.close();
    }
    const context = await browser.newContext();
    const page = await context.newPage();
    await shown(page, () => page.goto(dash.url));
    await sleep(2000); // the page's rows watched, its first samples taken
    const cost = await window(nodes);
    await context.close();
    return {
      dashboard: root === HERE ? "after" : "before",
      wire,
      loadMs: median(loads),
      reloadMs: median(reloads),
      loads,
      reloads,
      reloadMarks: marks, // echomq:queues, echomq:live on the last reload (ms from navigation)
      ...cost,
      loadAverage: loadAverage(),
    };
  } finally {
    await dash.close();
    await conn.close();
  }
}

async function run(wire: Wire, browser: Browser) {
  const cluster = await startCluster({ primaries: 3, ...(wire === 6 ? { module: modulePath() } : {}) });
  try {
    if (wire === 6) await installModuleBrand({ nodes: cluster.seeds });
    const conn = await connect({ nodes: [...cluster.seeds], wire });
    const names = Array.from({ length: QUEUES }, (_, i) => `q${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 100) {
      await Promise.all(names.slice(i, i + 100).map((n) => new Queue(n, conn).add("x")));
    }
    await new Queue("wide", conn, { lanes: 64 }).addBulk(
      Array.from({ length: 640 }, () => ({ payload: "w" })),
    );
    await conn.close();
    const roots = [...(args.before ? [resolve(args.before)] : []), HERE];
    for (const root of roots) {
      console.log(
        JSON.stringify(await measure(root, wire, [...cluster.seeds], cluster.primaries(), browser)),
      );
    }
  } finally {
    await cluster.stop();
  }
}

const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ["--no-sandbox"] });
try {
  console.log(`# ${QUEUES} queues + a queue of 64 lanes, 3 primaries; load average before: ${loadAverage()}`);
  for (const wire of args.wire ? [Number(args.wire) as Wire] : ([4, 6] as const)) await run(wire, browser);
} finally {
  await browser.close();
}

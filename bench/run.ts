/**
 * `npm run bench`: EchoMQ (wire 4, wire 6) against BullMQ and bee-queue on the bench's own
 * valkey-servers, first without persistence, then with appendonly yes + appendfsync everysec;
 * then the cluster measure (bench/cluster.ts) on local clusters of 3 primaries, no persistence.
 * Each round runs every system once, in a rotated order; each system runs in a child process of
 * its own (bench/child.ts) so its client CPU is measured alone. Medians over the rounds go to
 * bench/results/latest.{md,json,png}; the table is printed.
 *
 * Flags: --smoke (tiny, 1 round, exit 1 unless every job of every system was processed),
 * --rounds=N, --jobs=N (waiting jobs per processing run), --only=<system>[,<system>…]
 * (echomq-w4, echomq-w6, bullmq, beequeue), --measures=<measure>[,<measure>…] (add, process,
 * latency, ramp, burst, cluster, lanes, bus, tracing, lateness, idle, flows, limits, bullmq-bench),
 * --concurrency=N[,N…] (the processing measure's concurrencies, of 1, 10 and 100),
 * --persistence=none|aof|both, --out=<dir>,
 * --render=<results.json> (re-render its .md and .png; runs nothing).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { modulePath } from "../tools/module-path.js";
import { batchConfig, runBatchMeasure } from "./batches.js";
import { busConfig, runBusMeasure } from "./bus.js";
import { bullmqBenchConfig, runBullmqBench } from "./bullmq-bench.js";
import { runTracingMeasure, tracingConfig } from "./tracing.js";
import { idleConfig, runIdleMeasure } from "./idle.js";
import { renderChart } from "./chart.js";
import { runClusterMeasure } from "./cluster.js";
import { flowsConfig, runFlowsMeasure } from "./flows.js";
import { lanesConfig, runLanesMeasure } from "./lanes.js";
import { latenessConfig, runLatenessMeasure } from "./lateness.js";
import { limitsConfig, runLimitsMeasure } from "./limits.js";
import { live, runChild } from "./fork.js";
import type { MeasurePlan, MeasureResult } from "./measure.js";
import {
  clusterConfig,
  fullModes,
  MEASURES,
  type Measure,
  type ModeConfig,
  narrow,
  smokeModes,
} from "./modes.js";
import { renderMarkdown } from "./report.js";
import { type BenchReport, type ModeReport, summarize } from "./summary.js";
import { Admin, type BenchServer, startServer, valkeyBenchmark, valkeyVersion } from "./server.js";
import { round } from "./stats.js";
import { SYSTEM_IDS, type SystemId } from "./systems/types.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");

interface Flags {
  smoke: boolean;
  rounds: number | undefined;
  jobs: number | undefined;
  only: SystemId[];
  measures: Measure[];
  /** The processing measure's concurrencies, when narrowed (`--concurrency=100`, `--concurrency=1,10`). */
  concurrencies: number[] | undefined;
  persistence: "none" | "aof" | "both";
  out: string;
  /** Re-render the Markdown and the chart of a results JSON; runs nothing. */
  render: string | undefined;
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = {
    smoke: false,
    rounds: undefined,
    jobs: undefined,
    only: [...SYSTEM_IDS],
    measures: [...MEASURES],
    concurrencies: undefined,
    persistence: "both",
    out: join(here, "results"),
    render: undefined,
  };
  for (const arg of argv) {
    const [key, value] = arg.split("=", 2) as [string, string | undefined];
    const int = () => {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0)
        throw new UsageError(`${key} needs a positive integer, got ${value}`);
      return n;
    };
    if (key === "--smoke") flags.smoke = true;
    else if (key === "--rounds") flags.rounds = int();
    else if (key === "--jobs") flags.jobs = int();
    else if (key === "--only") {
      const ids = (value ?? "").split(",").filter(Boolean);
      for (const id of ids)
        if (!(SYSTEM_IDS as readonly string[]).includes(id))
          throw new UsageError(`--only: unknown system ${id} (known: ${SYSTEM_IDS.join(", ")})`);
      flags.only = ids as SystemId[];
    } else if (key === "--measures") {
      const names = (value ?? "").split(",").filter(Boolean);
      for (const m of names)
        if (!(MEASURES as readonly string[]).includes(m))
          throw new UsageError(`--measures: unknown measure ${m} (known: ${MEASURES.join(", ")})`);
      if (names.length === 0) throw new UsageError("--measures names no measure");
      flags.measures = names as Measure[];
    } else if (key === "--concurrency") {
      const cs = (value ?? "").split(",").map(Number);
      if (cs.some((c) => !Number.isInteger(c) || c <= 0))
        throw new UsageError(`--concurrency needs positive integers separated by commas, got ${value}`);
      flags.concurrencies = cs;
    } else if (key === "--persistence") {
      if (value !== "none" && value !== "aof" && value !== "both")
        throw new UsageError("--persistence is none, aof or both");
      flags.persistence = value;
    } else if (key === "--out") flags.out = resolve(value ?? "");
    else if (key === "--render") flags.render = resolve(value ?? "");
    else if (key === "--help" || key === "-h") {
      process.stdout.write(`${readFileSync(fileURLToPath(import.meta.url), "utf8").split("*/")[0]}*/\n`);
      process.exit(0);
    } else throw new UsageError(`unknown flag ${arg} (try --help)`);
  }
  if (flags.only.length === 0) throw new UsageError("--only names no system");
  return flags;
}

function packageVersion(name: string, from = root): string {
  try {
    const pkg = JSON.parse(readFileSync(join(from, "node_modules", name, "package.json"), "utf8")) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return "absent";
  }
}

/** Raw pipelined command rate of the server (ZADD and HSET shaped like a job's writes). */
async function ceiling(server: BenchServer, admin: Admin, requests: number) {
  await admin.flush();
  const zadd = await valkeyBenchmark(
    server.port,
    ["ZADD", "emq:{ceiling}:pending", "__rand_int__", "JOB__rand_int__"],
    requests,
  );
  const hset = await valkeyBenchmark(
    server.port,
    [
      "HSET",
      "emq:{ceiling}:job:__rand_int__",
      "state",
      "pending",
      "attempts",
      "0",
      "payload",
      "x".repeat(100),
    ],
    requests,
  );
  await admin.flush();
  // One ZADD and one HSET alternately: the harmonic mean.
  return { zadd: round(zadd, 0), hset: round(hset, 0), combined: round(2 / (1 / zadd + 1 / hset), 0) };
}

async function runMode(
  mode: ModeConfig,
  flags: Flags,
  failures: string[],
  warnings: string[],
): Promise<ModeReport> {
  const systems = flags.only;
  const needsPlain = systems.some((s) => s !== "echomq-w6");
  const needsModule = systems.includes("echomq-w6");
  const servers: { plain?: BenchServer; module?: BenchServer } = {};
  const admins: Admin[] = [];
  const results: MeasureResult[] = [];
  const started = performance.now();
  try {
    if (needsPlain) {
      servers.plain = await startServer({ aof: mode.aof });
      live.servers.add(servers.plain);
    }
    if (needsModule) {
      servers.module = await startServer({ aof: mode.aof, module: modulePath() });
      live.servers.add(servers.module);
    }
    const main = (servers.plain ?? servers.module)!;
    const admin = await new Admin(main.port).open();
    admins.push(admin);
    log(`[${mode.name}] valkey-server pid ${main.pid} port ${main.port}: valkey-benchmark ceiling`);
    const ceil = await ceiling(main, admin, mode.ceilingRequests);
    log(`[${mode.name}] ceiling ZADD ${ceil.zadd}/s, HSET ${ceil.hset}/s (pipelined, -P 16)`);
    let moduleVersion: string | undefined;
    if (servers.module) {
      const a = await new Admin(servers.module.port).open();
      admins.push(a);
      const reply = (await a.client.call("EMQ.VERSION")) as unknown[];
      moduleVersion = String(reply[3]);
    }
    for (let r = 1; r <= mode.rounds; r++) {
      const order = systems.map((_, i) => systems[(i + r - 1) % systems.length]!);
      for (const system of order) {
        if (live.stopping) break;
        const server = (system === "echomq-w6" ? servers.module : servers.plain)!;
        const plan: MeasurePlan = {
          system,
          endpoint: { host: server.host, port: server.port },
          round: r,
          addSeqJobs: mode.addSeqJobs,
          addParallelJobs: mode.addParallelJobs,
          addParallelProducers: mode.addParallelProducers,
          bulkJobs: mode.bulkJobs,
          bulkBatch: mode.bulkBatch,
          addRepeats: mode.addRepeats,
          processJobs: mode.processJobs,
          concurrencies: mode.concurrencies,
          processCapMs: mode.processCapMs,
          latency: mode.latency,
          ramp: mode.ramp,
          burst: mode.burst,
          phaseTimeoutMs: flags.smoke ? 30_000 : 180_000,
        };
        const t0 = performance.now();
        let res: MeasureResult;
        try {
          res = await runChild<MeasureResult>(plan, flags.smoke ? 120_000 : 600_000);
        } catch (err) {
          if (live.stopping) break;
          failures.push(`[${mode.name}] round ${r} ${(err as Error).message}`);
          log(`[${mode.name}] round ${r} ${system}: FAILED ${(err as Error).message}`);
          continue;
        }
        results.push(res);
        for (const e of res.errors) failures.push(`[${mode.name}] round ${r} ${system}: ${e}`);
        for (const w of res.warnings) warnings.push(`[${mode.name}] round ${r} ${system}: ${w}`);
        for (const c of mode.concurrencies) {
          const p = res.process.find((x) => x.concurrency === c);
          if (!p || (p.completed !== mode.processJobs && !(p.capped && p.failed === 0 && p.completed > 0)))
            failures.push(
              `[${mode.name}] round ${r} ${system}: c=${c} processed ${p?.completed ?? 0}/${mode.processJobs}`,
            );
        }
        for (const [what, plan, got] of [
          ["resume ramp", mode.ramp, res.ramp],
          ["delayed burst", mode.burst, res.burst],
        ] as const)
          if (plan && (!got || got.completed !== plan.jobs || got.failed > 0))
            failures.push(
              `[${mode.name}] round ${r} ${system}: ${what} completed ${got?.completed ?? 0}/${plan.jobs}` +
                (got?.failed ? `, ${got.failed} failed, first: ${got.firstError}` : ""),
            );
        if (res.ramp && res.ramp.startedBeforeRelease > 0)
          failures.push(
            `[${mode.name}] round ${r} ${system}: resume ramp: ${res.ramp.startedBeforeRelease} handlers ran before the release (the hold did not hold)`,
          );
        log(`[${mode.name}] round ${r}/${mode.rounds} ${system}: ${brief(res)} (${secs(t0)} s)`);
      }
    }
    return {
      mode: mode.name,
      config: mode,
      ceiling: ceil,
      moduleVersion,
      rounds: results,
      summary: summarize(systems, results, ceil.combined),
      wallSeconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    for (const a of admins) await a.close();
    for (const server of [servers.plain, servers.module]) {
      if (!server) continue;
      await server.stop();
      live.servers.delete(server);
    }
  }
}

function brief(r: MeasureResult): string {
  const k = (x: number | undefined) => (x === undefined ? "-" : `${(x / 1000).toFixed(1)}k`);
  const parts: string[] = [];
  if (r.addSeq || r.addParallel || r.bulk)
    parts.push(`add ${k(r.addSeq?.rate)}/${k(r.addParallel?.rate)}`, `bulk ${k(r.bulk?.rate)}`);
  if (r.process.length > 0)
    parts.push(`process ${r.process.map((p) => `c${p.concurrency} ${k(p.rate)}`).join(" ")}`);
  if (r.latency) parts.push(`latency p50/p99/max ${r.latency.p50}/${r.latency.p99}/${r.latency.max} ms`);
  const full = (ms: number | null) => (ms === null ? "never" : `${ms} ms`);
  if (r.ramp)
    parts.push(
      `resume ramp drain ${r.ramp.drainMs} ms (${r.ramp.drainRatio}× ideal), peak ${r.ramp.peak}, ${r.ramp.concurrency} running after ${full(r.ramp.fullMs)}`,
    );
  if (r.burst)
    parts.push(
      `delayed burst late p50/p99/max ${r.burst.lateness.p50}/${r.burst.lateness.p99}/${r.burst.lateness.max} ms, ` +
        `drain ${r.burst.drainMs} ms (${r.burst.drainRatio}× ideal), peak ${r.burst.peak}, ${r.burst.concurrency} running after ${full(r.burst.fullMs)}`,
    );
  if (r.errors.length) parts.push(`${r.errors.length} error(s)`);
  return parts.join(", ");
}

function secs(t0: number): string {
  return ((performance.now() - t0) / 1000).toFixed(1);
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function onSignal(signal: NodeJS.Signals): void {
  live.stopping = true;
  log(`\n${signal}: stopping the running system and the servers`);
  for (const child of live.children) child.kill("SIGKILL");
  void Promise.allSettled([...live.servers].map((s) => s.stop())).then(() => process.exit(130));
}

async function main(): Promise<void> {
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const flags = parseFlags(process.argv.slice(2));
  if (flags.render) {
    const report = JSON.parse(readFileSync(flags.render, "utf8")) as BenchReport;
    const base = flags.render.replace(/\.json$/, "");
    writeFileSync(`${base}.md`, renderMarkdown(report));
    writeFileSync(`${base}.png`, renderChart(report));
    log(`re-rendered ${base}.{md,png}`);
    return;
  }
  const t0 = performance.now();
  let modes = (flags.smoke ? smokeModes() : fullModes()).map((m) => narrow(m, flags.measures));
  if (flags.persistence !== "both") modes = modes.filter((m) => m.name === flags.persistence);
  const { concurrencies } = flags;
  if (concurrencies) {
    const known = new Set(modes.flatMap((m) => m.concurrencies));
    const unknown = concurrencies.filter((c) => !known.has(c));
    if (unknown.length > 0) {
      const runs = known.size > 0 ? `runs at ${[...known].join(", ")}` : "is not in this run";
      throw new UsageError(`--concurrency=${unknown.join(",")}: the processing measure ${runs}`);
    }
    modes = modes.map((m) => ({
      ...m,
      concurrencies: m.concurrencies.filter((c) => concurrencies.includes(c)),
    }));
  }
  // A mode left with nothing to run by --measures (the AOF mode has no latency, ramp or burst) is skipped.
  modes = modes.filter(
    (m) =>
      m.addSeqJobs + m.addParallelJobs + m.bulkJobs > 0 ||
      m.concurrencies.length > 0 ||
      m.latency ||
      m.ramp ||
      m.burst,
  );
  const cluster =
    flags.measures.includes("cluster") && flags.persistence !== "aof" ? clusterConfig(flags.smoke) : null;
  // The EchoMQ-only measures on single nodes or clusters of their own, without persistence.
  const echomqMeasure = <C extends { rounds: number }>(measure: Measure, config: (smoke: boolean) => C) => {
    const on =
      flags.measures.includes(measure) &&
      flags.persistence !== "aof" &&
      flags.only.some((s) => s.startsWith("echomq"));
    if (!on) return null;
    const cfg = config(flags.smoke);
    if (flags.rounds) cfg.rounds = flags.rounds;
    return cfg;
  };
  const lanes = echomqMeasure("lanes", lanesConfig);
  const flows = echomqMeasure("flows", flowsConfig);
  const bus = echomqMeasure("bus", busConfig);
  if (bus && flags.jobs) bus.jobs = flags.jobs;
  const batch = echomqMeasure("batch", batchConfig);
  if (batch && flags.jobs) batch.jobs = flags.jobs;
  const tracing = echomqMeasure("tracing", tracingConfig);
  if (tracing && flags.jobs) tracing.jobs = flags.jobs;
  const lateness =
    flags.measures.includes("lateness") && flags.persistence !== "aof" ? latenessConfig(flags.smoke) : null;
  if (lateness && flags.rounds) lateness.rounds = flags.rounds;
  const idle =
    flags.measures.includes("idle") && flags.persistence !== "aof" ? idleConfig(flags.smoke) : null;
  if (idle && flags.rounds) idle.rounds = flags.rounds;
  const limits =
    flags.measures.includes("limits") && flags.persistence !== "aof" ? limitsConfig(flags.smoke) : null;
  if (limits && flags.rounds) limits.rounds = flags.rounds;
  const bbench =
    flags.measures.includes("bullmq-bench") && flags.persistence !== "aof"
      ? bullmqBenchConfig(flags.smoke)
      : null;
  if (bbench && flags.rounds) bbench.rounds = flags.rounds;
  if (
    modes.length === 0 &&
    !cluster &&
    !lanes &&
    !bus &&
    !batch &&
    !tracing &&
    !lateness &&
    !idle &&
    !flows &&
    !limits &&
    !bbench
  )
    throw new UsageError("nothing to run: no mode has any of --measures");
  for (const m of modes) {
    if (flags.rounds) m.rounds = flags.rounds;
    if (flags.jobs) m.processJobs = flags.jobs;
  }
  if (cluster && flags.rounds) cluster.rounds = flags.rounds;
  // --jobs: the cluster measure spreads them over its queues.
  if (cluster && flags.jobs)
    cluster.jobsPerQueue = Math.max(1, Math.round(flags.jobs / (cluster.shards * cluster.queuesPerShard)));
  const failures: string[] = [];
  const warnings: string[] = [];
  const reports: ModeReport[] = [];
  for (const mode of modes) reports.push(await runMode(mode, flags, failures, warnings));
  const clusterReport =
    cluster && !live.stopping
      ? await runClusterMeasure(cluster, { smoke: flags.smoke, only: flags.only }, failures, warnings)
      : null;
  const lanesReport = lanes && !live.stopping ? await runLanesMeasure(lanes, failures) : null;
  const busReport = bus && !live.stopping ? await runBusMeasure(bus, flags.only, failures) : null;
  const batchReport = batch && !live.stopping ? await runBatchMeasure(batch, flags.only, failures) : null;
  const tracingReport =
    tracing && !live.stopping ? await runTracingMeasure(tracing, flags.only, failures) : null;
  const latenessReport =
    lateness && !live.stopping ? await runLatenessMeasure(lateness, flags.only, failures) : null;
  const idleReport = idle && !live.stopping ? await runIdleMeasure(idle, flags.only, failures) : null;
  const limitsReport = limits && !live.stopping ? await runLimitsMeasure(limits, flags.only, failures) : null;
  const flowsReport = flows && !live.stopping ? await runFlowsMeasure(flows, flags.only, failures) : null;
  const bbenchReport = bbench && !live.stopping ? await runBullmqBench(bbench, flags.only, failures) : null;
  const cpus = os.cpus();
  const report: BenchReport = {
    date: new Date().toISOString(),
    command: ["npm run bench", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(
      " ",
    ),
    smoke: flags.smoke,
    machine: {
      cpu: cpus[0]?.model ?? "unknown",
      cores: cpus.length,
      memoryBytes: os.totalmem(),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      loadAverageAtEnd: os.loadavg().map((x) => round(x, 2)),
    },
    versions: {
      node: process.version,
      valkey: await valkeyVersion(),
      echomq: (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version,
      echomqModule:
        reports.find((r) => r.moduleVersion)?.moduleVersion ??
        clusterReport?.moduleVersion ??
        busReport?.moduleVersion ??
        batchReport?.moduleVersion ??
        tracingReport?.moduleVersion ??
        latenessReport?.moduleVersion ??
        idleReport?.moduleVersion ??
        bbenchReport?.moduleVersion ??
        "not loaded",
      bullmq: packageVersion("bullmq"),
      "bee-queue": packageVersion("bee-queue"),
      "redis (bee-queue's client)": packageVersion("redis", join(root, "node_modules", "bee-queue")),
      iovalkey: packageVersion("iovalkey"),
      "@opentelemetry/api": packageVersion("@opentelemetry/api"),
      "@opentelemetry/sdk-trace-base": packageVersion("@opentelemetry/sdk-trace-base"),
      ioredis: packageVersion("ioredis"),
      "@resvg/resvg-js": packageVersion("@resvg/resvg-js"),
      tsx: packageVersion("tsx"),
      typescript: packageVersion("typescript"),
    },
    modes: reports,
    cluster: clusterReport,
    lanes: lanesReport,
    bus: busReport,
    batch: batchReport,
    tracing: tracingReport,
    lateness: latenessReport,
    idle: idleReport,
    limits: limitsReport,
    flows: flowsReport,
    bullmqBench: bbenchReport,
    failures,
    warnings,
    wallSeconds: round((performance.now() - t0) / 1000, 1),
  };
  const markdown = renderMarkdown(report);
  mkdirSync(flags.out, { recursive: true });
  // Only the full default run is "latest"; a run narrowed by flags writes "partial".
  const narrowed =
    flags.rounds !== undefined ||
    flags.jobs !== undefined ||
    flags.only.length !== SYSTEM_IDS.length ||
    flags.measures.length !== MEASURES.length ||
    flags.persistence !== "both" ||
    flags.concurrencies !== undefined;
  const base = flags.smoke ? "smoke" : narrowed ? "partial" : "latest";
  writeFileSync(join(flags.out, `${base}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(flags.out, `${base}.md`), markdown);
  writeFileSync(join(flags.out, `${base}.png`), renderChart(report));
  process.stdout.write(`${markdown}\n`);
  log(`wrote ${join(flags.out, base)}.{md,json,png} in ${report.wallSeconds} s`);
  if (warnings.length > 0) log(`${warnings.length} warning(s):\n${warnings.map((w) => `  ${w}`).join("\n")}`);
  if (failures.length > 0) {
    log(`${failures.length} failure(s):\n${failures.map((f) => `  ${f}`).join("\n")}`);
    process.exitCode = 1;
  }
}

class UsageError extends Error {}

main().catch((err) => {
  if (err instanceof UsageError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

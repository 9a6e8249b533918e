/**
 * The bullmq-bench measure: the four scenarios of BullMQ's own benchmark suite (`queue-add`,
 * `queue-add-bulk`, `worker-generic`, `worker-concurrent`; bench/bullmq-bench-run.ts), with its
 * payloads, counts and warm-up, for every system, so that ratios to BullMQ can be held against
 * figures published with that suite. On the bench's own single nodes (no persistence), each
 * round runs every system once, each in a child process of its own, the order rotated; beside
 * BullMQ at the bench's settings (completed jobs removed) runs BullMQ as bullmq-bench itself sets
 * it (every option at its default). Medians over the rounds; ratios to BullMQ at the bench's settings.
 */
import os from "node:os";
import type { ScenarioName, ScenarioPlan } from "./bullmq-bench-run.js";
import { runRounds } from "./rounds.js";
import { median, round } from "./stats.js";
import { LABELS, type SystemId } from "./systems/types.js";

interface BullmqBenchConfig {
  rounds: number;
  /** Runs of each scenario per round (a fresh database each); the round counts the median. */
  repeats: number;
  scenarios: ScenarioPlan[];
  /** Run BullMQ with bullmq-bench's own settings beside it. */
  bullmqDefaults: boolean;
  /** The systems it runs (with `--only`): all of them, or the smoke run's one. */
  systems: readonly SystemId[];
}

/** Where the scenarios are defined. */
const SOURCE = "taskforcesh/bullmq-bench, src/bullmq-suite.ts (commit fd3766f)";

const SCENARIOS: ScenarioPlan[] = [
  { name: "queue-add", warmup: 1000, timed: 1000, bulk: 0, concurrency: 0, width: 10, depth: 10 },
  { name: "queue-add-bulk", warmup: 1000, timed: 10_000, bulk: 50, concurrency: 0, width: 1, depth: 1 },
  { name: "worker-generic", warmup: 1000, timed: 1000, bulk: 0, concurrency: 1, width: 1, depth: 1 },
  { name: "worker-concurrent", warmup: 1000, timed: 10_000, bulk: 0, concurrency: 100, width: 1, depth: 1 },
];

export function bullmqBenchConfig(smoke: boolean): BullmqBenchConfig {
  const full: BullmqBenchConfig = {
    rounds: 3,
    repeats: 3,
    scenarios: SCENARIOS,
    bullmqDefaults: true,
    systems: ["echomq-w4", "echomq-w6", "bullmq", "beequeue"],
  };
  if (!smoke) return full;
  // Smoke: the same shapes with 20 warm-up and 100 timed jobs, once, EchoMQ wire 4 alone (~3 s:
  // the scenarios' code; every adapter's worker with a handler runs in the smoke's latency phase).
  const scenarios = SCENARIOS.map((s) => ({ ...s, warmup: 20, timed: 100 }));
  return { rounds: 1, repeats: 1, scenarios, bullmqDefaults: false, systems: ["echomq-w4"] };
}

interface BullmqBenchRow {
  system: SystemId;
  /** `bench`: the bench's settings for that system; `bullmq-bench`: BullMQ as bullmq-bench sets it. */
  settingsOf: "bench" | "bullmq-bench";
  label: string;
  settings: string;
  /** Median over the rounds of each round's median run, jobs/s. */
  rates: Partial<Record<ScenarioName, number>>;
  /**
   * Each round: its rate (the median run), every run's rate, the child's wall time (s) and the
   * 1-minute load average when the child ended.
   */
  rounds: {
    round: number;
    load1: number;
    wallSeconds: number;
    rates: Partial<Record<ScenarioName, number>>;
    runs: Partial<Record<ScenarioName, number[]>>;
  }[];
}

export interface BullmqBenchReport {
  config: BullmqBenchConfig;
  source: string;
  moduleVersion?: string;
  /** os.loadavg() when the measure started and ended (1, 5, 15 min). */
  load: { start: number[]; end: number[] };
  rows: BullmqBenchRow[];
}

interface Variant {
  system: SystemId;
  defaults: boolean;
}

const nameOf = (v: Variant) => (v.defaults ? "bullmq (bullmq-bench's settings)" : v.system);
const loadavg = () => os.loadavg().map((x) => round(x, 2));

export async function runBullmqBench(
  cfg: BullmqBenchConfig,
  only: readonly SystemId[],
  failures: string[],
): Promise<BullmqBenchReport> {
  const load = { start: loadavg(), end: [] as number[] };
  const variants: Variant[] = [
    ...(["echomq-w4", "echomq-w6", "bullmq"] as const).map((system) => ({ system, defaults: false })),
    ...(cfg.bullmqDefaults ? [{ system: "bullmq" as const, defaults: true }] : []),
    { system: "beequeue" as const, defaults: false },
  ].filter((v) => only.includes(v.system) && cfg.systems.includes(v.system));
  const rows = new Map<string, BullmqBenchRow>();
  const { moduleVersion } = await runRounds(
    {
      measure: "bullmq-bench",
      rounds: cfg.rounds,
      variants,
      name: nameOf,
      plan: (v, bare) => ({
        ...bare,
        bullmqBench: { scenarios: cfg.scenarios, repeats: cfg.repeats },
        ...(v.defaults ? { bullmqBenchDefaults: true } : {}),
      }),
      took: (v, r, res) => {
        const got = res.scenarios ?? [];
        if (got.length !== cfg.scenarios.length) {
          failures.push(
            `bullmq-bench: ${nameOf(v)} round ${r}: ${got.length}/${cfg.scenarios.length} scenarios ran`,
          );
          return;
        }
        const row = rows.get(nameOf(v)) ?? {
          system: v.system,
          settingsOf: v.defaults ? "bullmq-bench" : "bench",
          label: v.defaults ? "BullMQ, bullmq-bench's settings" : LABELS[v.system],
          settings: res.settings,
          rates: {},
          rounds: [],
        };
        const rates = Object.fromEntries(got.map((s) => [s.name, s.rate]));
        const load1 = round(os.loadavg()[0] ?? Number.NaN, 2);
        const runs = Object.fromEntries(got.map((s) => [s.name, s.runs]));
        row.rounds.push({ round: r, load1, wallSeconds: res.wallSeconds, rates, runs });
        rows.set(nameOf(v), row);
        process.stderr.write(
          `[bullmq-bench] round ${r}/${cfg.rounds} ${nameOf(v)}: ` +
            `${got.map((s) => `${s.name} ${round(s.rate / 1000)}k`).join(", ")} (load ${load1})\n`,
        );
      },
    },
    failures,
  );
  for (const row of rows.values())
    for (const s of cfg.scenarios)
      row.rates[s.name] = round(median(row.rounds.map((x) => x.rates[s.name] ?? Number.NaN)), 0);
  load.end = loadavg();
  // The table's order: the variants' order, whatever order the rounds ran them in.
  const ordered = variants.flatMap((v) => rows.get(nameOf(v)) ?? []);
  return { config: cfg, source: SOURCE, ...(moduleVersion ? { moduleVersion } : {}), load, rows: ordered };
}

const kilo = (x: number) => (Number.isFinite(x) ? `${round(x / 1000)}k` : "—");

function describe(s: ScenarioPlan): string {
  const what =
    s.concurrency > 0
      ? `a worker at concurrency ${s.concurrency}, ${s.warmup + s.timed} jobs waiting`
      : s.bulk > 0
        ? `batches of ${s.bulk}, one in flight`
        : "one producer awaiting each add";
  return `\`${s.name}\`: ${what}, ${s.width} × ${s.depth} payload, ${s.warmup} warm-up + ${s.timed} timed jobs`;
}

/** The measure's table (jobs/s and the ratio to BullMQ at the bench's settings), for the report. */
export function renderBullmqBench(report: BullmqBenchReport): string[] {
  const { config, rows } = report;
  const names = config.scenarios.map((s) => s.name);
  const bull = rows.find((r) => r.system === "bullmq" && r.settingsOf === "bench");
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  const out = [
    `## bullmq-bench's scenarios (${plural(config.rounds, "round")} × ${plural(config.repeats, "run")})`,
    "",
    `The four scenarios of BullMQ's own benchmark suite (${report.source}), for every system: ` +
      `${config.scenarios.map(describe).join("; ")}. Jobs/s over the timed jobs (workers: from the ` +
      "warm-up's last handler start to the last one's); medians over the rounds of each round's median run; " +
      "in parentheses the ratio to BullMQ at the bench's settings. No persistence. bullmq-bench's own " +
      "printed rate divides warm-up and timed jobs by the timed span: multiply these by (warm-up + timed) ÷ " +
      "timed (×2 for `queue-add` and `worker-generic`, ×1.1 for the others) to compare raw figures with it.",
    "",
    `| system | ${names.map((n) => `${n} (jobs/s ↑)`).join(" | ")} |`,
    `|---|${names.map(() => "---:").join("|")}|`,
  ];
  for (const r of rows) {
    const cells = names.map((n) => {
      const v = r.rates[n] ?? Number.NaN;
      const b = bull?.rates[n];
      return r !== bull && b ? `${kilo(v)} (${(v / b).toFixed(2)}×)` : kilo(v);
    });
    out.push(`| ${r.label} | ${cells.join(" | ")} |`);
  }
  out.push("", "Settings:", "");
  for (const r of rows) out.push(`* ${r.label}: ${r.settings}`);
  const load1 = rows.flatMap((r) => r.rounds.map((x) => x.load1));
  out.push(
    "",
    `Load average (1, 5, 15 min) at the start ${report.load.start.join(", ")}, at the end ${report.load.end.join(", ")}; ` +
      `1-minute load after each run: ${Math.min(...load1)}–${Math.max(...load1)} (the JSON has each run's).`,
  );
  return out;
}

/**
 * One harness run: verify the pinned bodies (refuse to measure otherwise), start the stage — one
 * scratch server, or (`cluster`) a local 3-primary cluster of module nodes — run every listed
 * case and the generated sequences, then the durability checks (no `EMQ.*` record in the AOF;
 * the same keyspace after a restart that loads it), and report.
 */
import { type Bodies, loadBodies } from "./bodies.js";
import type { Case } from "./build.js";
import { BUS_CASES } from "./bus.js";
import { CASES } from "./cases.js";
import { DRAIN_CASES } from "./drains.js";
import { BOUND_CASES } from "./bounds.js";
import { EXTRAS_CASES } from "./extras.js";
import { LIMIT_CASES } from "./limits.js";
import { NEXT_CASES } from "./next.js";
import { BATCH_CASES } from "./batches.js";
import { SETTLEMENT_CASES } from "./settlements.js";
import { FLOW_CASES } from "./flows.js";
import { OPERATE_CASES } from "./operate.js";
import { CANCEL_CASES } from "./cancel.js";
import type { Executors, Fault } from "./executors.js";
import { runModel } from "./model.js";
import { REFUSAL_CASES } from "./refusals.js";
import { REPEAT_CASES } from "./repeat.js";
import { Tally } from "./report.js";
import { clusterStage, singleStage } from "./stage.js";
import { CaseRun } from "./steps.js";
import { BRAND } from "./verbs.js";

interface HarnessOptions {
  /** Generated steps to run at least (the property-based model test). */
  steps: number;
  seed: number;
  /** Run on a local cluster of three module primaries instead of one scratch server. */
  cluster?: boolean;
  /** Run the listed cases (default true); `only` keeps the cases whose name matches. */
  cases?: boolean;
  only?: RegExp;
  /** Run the durability checks (default true). */
  durability?: boolean;
  /** A deliberate fault on the native side (the harness's own tests). */
  fault?: Fault | null;
  /** Run every well-formed `CLAIM` step's native side as `EMQ.BCLAIM` (`Variant`, `--bclaim`). */
  blockingClaim?: boolean;
  /** Pinned bodies already verified (default: read and verified now from `pins`). */
  bodies?: Bodies;
  /** Where the pins and scripts are (default: this repository and harness/pins.json). */
  pins?: { repo: string; file: string };
  log?: (line: string) => void;
}

export interface HarnessResult {
  tally: Tally;
  report: string;
  seconds: number;
  ok: boolean;
}

export const ALL_CASES: Case[] = [
  ...CASES,
  ...EXTRAS_CASES,
  ...BOUND_CASES,
  ...BUS_CASES,
  ...OPERATE_CASES,
  ...CANCEL_CASES,
  ...DRAIN_CASES,
  ...LIMIT_CASES,
  ...NEXT_CASES,
  ...BATCH_CASES,
  ...SETTLEMENT_CASES,
  ...FLOW_CASES,
  ...REPEAT_CASES,
  ...REFUSAL_CASES,
];

export async function runHarness(o: HarnessOptions): Promise<HarnessResult> {
  const started = performance.now();
  const log = o.log ?? (() => {});
  const bodies = o.bodies ?? loadBodies(o.pins?.repo, o.pins?.file);
  log(`pinned bodies verified at ${bodies.commit.slice(0, 12)} (${bodies.byVerb.size} scripts)`);
  const variant = { blockingClaim: o.blockingClaim === true };
  const stage = await (o.cluster ? clusterStage : singleStage)(bodies, o.fault ?? null, variant);
  log(`on ${stage.where}`);
  const tally = new Tally();
  tally.notes.push(`on ${stage.where}`);
  if (variant.blockingClaim)
    tally.notes.push(
      "the native side of every well-formed CLAIM step ran as EMQ.BCLAIM <tail> 1 (nil compared as [])",
    );
  try {
    if (o.cases !== false) {
      const cases = ALL_CASES.filter((c) => !o.only || o.only.test(c.name));
      const skipped = new Map<string, number>();
      for (const c of cases) {
        const ex = stage.forCase(c);
        if (typeof ex === "string") skipped.set(ex, (skipped.get(ex) ?? 0) + 1);
        else await runCase(ex, c, tally);
      }
      for (const [why, n] of skipped) tally.notes.push(`not run here (single-node only): ${n} ${why}`);
      log(`listed cases: ${tally.listedCases}, ${tally.failures.length} failure(s)`);
    }
    if (o.steps > 0) {
      await runModel(stage.next, tally, { steps: o.steps, seed: o.seed, log });
      log(`generated steps: ${tally.generatedSteps} in ${tally.generatedRuns} sequences`);
    }
    if (o.durability !== false) await stage.durability(tally);
    tally.notes.push(...stage.summary());
  } finally {
    await stage.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const report = tally.render({ seconds, seed: o.seed, commit: bodies.commit });
  return { tally, report, seconds, ok: tally.failed === 0 };
}

/** A listed case on fresh queues; it stops at its first failed step. The brand is restored. */
async function runCase(ex: Executors, c: Case, tally: Tally): Promise<CaseRun> {
  const run = new CaseRun(ex, c.name, c.queues ?? ["A", "B"]);
  try {
    for (const action of c.actions) {
      const outcome = await run.run(action);
      if (outcome?.verdict === "failed") break;
    }
  } catch (err) {
    run.outcomes.push({ verb: "HARNESS", verdict: "failed", label: c.name, problems: [String(err)] });
  } finally {
    if (ex.brand !== "ok") await ex.setBrand(BRAND);
    await run.close();
  }
  tally.listedCases += 1;
  for (const outcome of run.outcomes) tally.add(outcome);
  return run;
}

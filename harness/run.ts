/**
 * One harness run: verify the pinned bodies (refuse to measure otherwise), start the scratch
 * server, run every listed case and the generated sequences, then the durability checks (no
 * `EMQ.*` record in the AOF; the same keyspace after a restart that loads it), and report.
 */
import { type Bodies, loadBodies } from "./bodies.js";
import type { Case } from "./build.js";
import { CASES } from "./cases.js";
import { DRAIN_CASES } from "./drains.js";
import { changes, show } from "./compare.js";
import { Executors, type Fault } from "./executors.js";
import { runModel } from "./model.js";
import { REFUSAL_CASES } from "./refusals.js";
import { Tally } from "./report.js";
import { Scratch } from "./scratch.js";
import { CaseRun } from "./steps.js";
import { BRAND } from "./verbs.js";

export interface HarnessOptions {
  /** Generated steps to run at least (the property-based model test). */
  steps: number;
  seed: number;
  /** Run the listed cases (default true); `only` keeps the cases whose name matches. */
  cases?: boolean;
  only?: RegExp;
  /** Run the durability checks (default true). */
  durability?: boolean;
  /** A deliberate fault on the native side (the harness's own tests). */
  fault?: Fault | null;
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

export const ALL_CASES: Case[] = [...CASES, ...DRAIN_CASES, ...REFUSAL_CASES];

export async function runHarness(o: HarnessOptions): Promise<HarnessResult> {
  const started = performance.now();
  const log = o.log ?? (() => {});
  const bodies = o.bodies ?? loadBodies(o.pins?.repo, o.pins?.file);
  log(`pinned bodies verified at ${bodies.commit.slice(0, 12)} (${bodies.byVerb.size} scripts)`);
  const scratch = await Scratch.start();
  const tally = new Tally();
  try {
    const ex = new Executors(scratch, bodies, o.fault ?? null);
    if (o.cases !== false) {
      const cases = ALL_CASES.filter((c) => !o.only || o.only.test(c.name));
      for (const c of cases) await runCase(ex, c, tally);
      log(`listed cases: ${cases.length}, ${tally.failures.length} failure(s)`);
    }
    if (o.steps > 0) {
      await runModel(ex, tally, { steps: o.steps, seed: o.seed, log });
      log(`generated steps: ${tally.generatedSteps} in ${tally.generatedRuns} sequences`);
    }
    if (o.durability !== false) await durability(scratch, tally);
  } finally {
    await scratch.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const report = tally.render({ seconds, seed: o.seed, commit: bodies.commit });
  return { tally, report, seconds, ok: tally.failed === 0 };
}

/** A listed case on fresh queues; it stops at its first failed step. The brand is restored. */
export async function runCase(ex: Executors, c: Case, tally: Tally): Promise<CaseRun> {
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

/** No `EMQ.` (any case) in the AOF files; the full keyspace unchanged by a restart on the AOF. */
export async function durability(scratch: Scratch, tally: Tally): Promise<void> {
  const aof: string[] = [];
  for (const [file, bytes] of scratch.aofFiles()) {
    const text = bytes.toString("latin1");
    const at = text.search(/emq\./i);
    if (at >= 0)
      aof.push(
        `${file} holds an EMQ.* record at byte ${at}: ${show(text.slice(Math.max(0, at - 40), at + 60))}`,
      );
  }
  tally.add({
    verb: "durability: no EMQ.* in the AOF",
    verdict: aof.length ? "failed" : "equal",
    label: "AOF",
    problems: aof,
  });
  const before = await scratch.keys.dumpAll();
  await scratch.restart();
  const after = await scratch.keys.dumpAll();
  const diff = changes(before, after);
  if (before.size === 0) diff.push("the keyspace was empty: nothing was checked");
  tally.add({
    verb: "durability: restart on the AOF",
    verdict: diff.length ? "failed" : "equal",
    label: `restart (${before.size} keys)`,
    problems: diff,
  });
}

/**
 * A harness run with a deliberate fault on the native side (harness/executors.ts `Fault`): the
 * listed cases matching `only`, `steps` generated steps, no durability checks. `faultFailure`
 * also finds the failure the fault must cause on its own verb, and fails the test with the run's
 * report when there is none.
 */
import assert from "node:assert/strict";
import type { Fault } from "../../harness/executors.js";
import { type HarnessResult, runHarness } from "../../harness/run.js";

const SEED = Number(process.env.HARNESS_SEED ?? 20261129);

export function withFault(fault: Fault, only: RegExp, steps = 0): Promise<HarnessResult> {
  return runHarness({ steps, seed: SEED, only, fault, durability: false });
}

export async function faultFailure(
  fault: Fault,
  only: RegExp,
): Promise<{ result: HarnessResult; failure: HarnessResult["tally"]["failures"][number]; problems: string }> {
  const result = await withFault(fault, only);
  const failure = result.tally.failures.find((f) => f.verb === fault.verb);
  assert.ok(failure, `the fault on ${fault.verb} was not caught:\n${result.report}`);
  return { result, failure, problems: failure.problems.join("\n") };
}

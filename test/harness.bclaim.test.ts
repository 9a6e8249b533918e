/**
 * The harness with the blocking claim (`npm run harness -- --bclaim`): the native side of every
 * well-formed `CLAIM` step — listed cases and generated sequences — runs as `EMQ.BCLAIM <tail> 1`,
 * the blocking claim's path when a job is ready, and must equal the script side with nil
 * compared as `[]`: zero failures. A fault in it is caught.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runHarness } from "../harness/run.js";

const SEED = Number(process.env.HARNESS_SEED ?? 20261201);

describe("the harness, CLAIM steps as EMQ.BCLAIM", () => {
  test("the listed CLAIM cases and 1,000 generated steps: zero failures", async () => {
    const result = await runHarness({ steps: 1000, seed: SEED, only: /CLAIM|claim/, blockingClaim: true });
    assert.equal(result.ok, true, result.report);
    assert.match(result.report, /ran as EMQ\.BCLAIM/);
    const row = result.tally.rows.get("CLAIM");
    assert.ok(row && row.equal > 100, result.report);
  });

  test("a wrong reply of the blocking claim is caught", async () => {
    const result = await runHarness({
      steps: 0,
      seed: SEED,
      only: /^CLAIM/,
      blockingClaim: true,
      durability: false,
      fault: {
        verb: "CLAIM",
        reply: (r) => (r.t === "array" && r.v.length === 5 ? { t: "array", v: r.v.slice(0, 4) } : r),
      },
    });
    assert.equal(result.ok, false, result.report);
  });
});

/**
 * The bench refuses a flag it cannot honour before it starts anything: the process exits 1 and
 * says which flag and why (a narrowing that would leave nothing measured is not a silent no-op).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

function bench(...flags: string[]) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", ...flags], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: run.status, stderr: run.stderr.trim() };
}

test("--concurrency names a concurrency the processing measure runs at", () => {
  assert.deepEqual(bench("--concurrency=50", "--measures=process"), {
    code: 1,
    stderr: "--concurrency=50: the processing measure runs at 1, 10, 100",
  });
  assert.deepEqual(bench("--concurrency=100,7", "--measures=process", "--persistence=aof"), {
    code: 1,
    stderr: "--concurrency=7: the processing measure runs at 100",
  });
});

test("--concurrency with no processing measure in the run, or not a number", () => {
  assert.deepEqual(bench("--concurrency=100", "--measures=add"), {
    code: 1,
    stderr: "--concurrency=100: the processing measure is not in this run",
  });
  const bad = bench("--concurrency=ten");
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr, "--concurrency needs positive integers separated by commas, got ten");
});

/**
 * The claim watchdog (src/worker/claims.ts): a claim unanswered past its bound is abandoned with
 * `ClaimUnansweredError` and a job it brings later is handed back; a claim answered in time passes
 * through untouched; and every claim in flight shares one timer (a slot does not arm and clear a
 * timer per job). Pure host logic: no server.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { ClaimedJob, ClaimOutcome } from "../src/jobs.js";
import { ClaimUnansweredError } from "../src/errors.js";
import { abandonable } from "../src/worker/claims.js";

// The watchdog's timer is unref'd (a claim in flight has a socket holding the process open; these
// claims are bare promises, so the test holds it open itself).
const alive = setInterval(() => {}, 1000);
after(() => clearInterval(alive));

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const job = (id: string) =>
  ({ id, payload: Buffer.from("p"), attempts: 1, deadline: 0, timeoutMs: 0 }) as unknown as ClaimedJob;

test("an answered claim passes through; a failed one rejects with its own error", async () => {
  const ok = deferred<ClaimOutcome>();
  const got = abandonable(ok.promise, "q", () => assert.fail("nothing to hand back"), 10_000);
  ok.resolve(job("JOB1"));
  assert.equal(((await got) as ClaimedJob).id, "JOB1");
  const bad = deferred<ClaimOutcome>();
  const failed = abandonable(bad.promise, "q", () => {}, 10_000);
  bad.reject(new Error("socket closed"));
  await assert.rejects(failed, /socket closed/);
});

test("an unanswered claim is abandoned after its bound, and a job it brings later is handed back", async () => {
  const late = deferred<ClaimOutcome>();
  const handedBack: string[] = [];
  const got = abandonable(late.promise, "orders", (j) => handedBack.push(j.id), 30);
  await assert.rejects(got, (err: unknown) => {
    assert.ok(err instanceof ClaimUnansweredError);
    assert.match(err.message, /orders/);
    return true;
  });
  late.resolve(job("JOB2"));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(handedBack, ["JOB2"]);
});

test("claims in flight share one timer: 50 claims arm at most one, not one each", async () => {
  const real = globalThis.setTimeout;
  let armed = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    armed++;
    return real(...args);
  }) as typeof setTimeout;
  try {
    const pending = Array.from({ length: 50 }, () => deferred<ClaimOutcome>());
    const watched = pending.map((d) => abandonable(d.promise, "q", () => {}, 1));
    for (const d of pending.slice(0, 25)) d.resolve(null);
    await Promise.all(watched.slice(0, 25));
    assert.ok(armed <= 1, `50 claims in flight armed ${armed} timers`);
    // the rest are abandoned together when the shared timer fires
    const outcomes = await Promise.allSettled(watched.slice(25));
    assert.deepEqual(
      outcomes.map((o) => o.status === "rejected" && o.reason instanceof ClaimUnansweredError),
      Array(25).fill(true),
    );
    assert.ok(armed <= 2, `abandoning 25 claims at once armed ${armed} timers in all`);
  } finally {
    globalThis.setTimeout = real;
  }
});

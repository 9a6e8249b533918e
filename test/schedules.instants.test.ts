/**
 * A schedule's instants with a fixed "now" (no server): everyMs anchored to the epoch or to
 * startAt, cron in a time zone across both DST changes, startAt / endAt, the missed-instant plans
 * (skip with its grace, catch-up with its bound), the spec's checks and the derived ids.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isValidBrandedId } from "../src/branded-id.js";
import { InvalidArgumentError } from "../src/errors.js";
import { Instants, MAX_CATCH_UP, plan } from "../src/schedules/instants.js";
import { checkSchedule, instantId, parseSpec, specText } from "../src/schedules/options.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const instants = (o: Record<string, unknown>) => new Instants(checkSchedule({ payload: "", ...o }).spec);

/** The `n` instants after `from`. */
function series(i: Instants, from: number, n: number): (string | null)[] {
  const out: (string | null)[] = [];
  let t: number | null = from;
  for (let k = 0; k < n && t !== null; k++) {
    t = i.after(t);
    out.push(iso(t));
  }
  return out;
}

test("everyMs: multiples of the period since the epoch, or since startAt", () => {
  const every = instants({ everyMs: 200 });
  assert.equal(every.after(1_000), 1_200);
  assert.equal(every.after(1_199), 1_200);
  assert.equal(every.atOrAfter(1_200), 1_200);
  const anchored = instants({ everyMs: 1000, startAt: 10_050 });
  assert.equal(anchored.after(0), 10_050, "nothing before startAt");
  assert.equal(anchored.after(10_050), 11_050);
  assert.equal(anchored.atOrAfter(12_000), 12_050);
});

test("endAt: the last instant is at or before it, then none", () => {
  const i = instants({ everyMs: 1000, endAt: 3_000 });
  assert.equal(i.after(1_500), 2_000);
  assert.equal(i.after(2_000), 3_000);
  assert.equal(i.after(3_000), null);
});

test("cron in Europe/Berlin across spring forward: 02:30 does not exist and fires at 03:00 CEST", () => {
  const i = instants({ cron: "30 2 * * *", tz: "Europe/Berlin" });
  assert.deepEqual(series(i, at("2026-03-27T12:00:00Z"), 4), [
    "2026-03-28T01:30:00.000Z", // 02:30 CET (UTC+1)
    "2026-03-29T01:00:00.000Z", // the gap: 03:00 CEST, the first time after it
    "2026-03-30T00:30:00.000Z", // 02:30 CEST (UTC+2)
    "2026-03-31T00:30:00.000Z",
  ]);
});

test("cron in Europe/Berlin across fall back: 02:30 occurs twice and fires once, at the first", () => {
  const i = instants({ cron: "30 2 * * *", tz: "Europe/Berlin" });
  assert.deepEqual(series(i, at("2026-10-23T12:00:00Z"), 4), [
    "2026-10-24T00:30:00.000Z", // 02:30 CEST
    "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first of the two
    "2026-10-26T01:30:00.000Z", // 02:30 CET
    "2026-10-27T01:30:00.000Z",
  ]);
  const hourly = instants({ cron: "0 * * * *", tz: "Europe/Berlin" });
  assert.deepEqual(series(hourly, at("2026-10-24T23:30:00Z"), 4), [
    "2026-10-25T00:00:00.000Z", // 02:00 CEST
    "2026-10-25T01:00:00.000Z", // 02:00 CET: once per real hour
    "2026-10-25T02:00:00.000Z",
    "2026-10-25T03:00:00.000Z",
  ]);
});

test("cron in America/New_York: the same local time moves in UTC across DST; UTC is the default zone", () => {
  const ny = instants({ cron: "0 9 * * *", tz: "America/New_York" });
  assert.deepEqual(series(ny, at("2026-03-07T20:00:00Z"), 2), [
    "2026-03-08T13:00:00.000Z",
    "2026-03-09T13:00:00.000Z",
  ]);
  assert.deepEqual(series(ny, at("2026-03-06T20:00:00Z"), 1), ["2026-03-07T14:00:00.000Z"]);
  const utc = instants({ cron: "0 9 * * *" });
  assert.equal(iso(utc.after(at("2026-03-08T00:00:00Z"))), "2026-03-08T09:00:00.000Z");
  const seconds = instants({ cron: "*/15 * * * * *" });
  assert.equal(seconds.after(at("2026-01-01T00:00:01Z")), at("2026-01-01T00:00:15Z"));
});

test("plan: nothing due, nothing to do", () => {
  assert.deepEqual(plan(instants({ everyMs: 200 }), 10_000, 9_999), []);
});

test("plan skip: instants within the grace fire in order, older ones are skipped", () => {
  const i = instants({ everyMs: 1000, graceMs: 2500 });
  assert.deepEqual(plan(i, 10_000, 10_000), [{ expected: 10_000, instant: 10_000, next: 11_000 }]);
  // Down from 10 s to 20.5 s: 18, 19, 20 are within 2.5 s; 10…17 are skipped.
  assert.deepEqual(plan(i, 10_000, 20_500), [
    { expected: 10_000, instant: 18_000, next: 19_000 },
    { expected: 19_000, instant: 19_000, next: 20_000 },
    { expected: 20_000, instant: 20_000, next: 21_000 },
  ]);
});

test("plan skip: when every due instant is late, one call skips them all to the next future instant", () => {
  const daily = instants({ cron: "0 3 * * *" });
  const next = at("2026-05-01T03:00:00Z");
  assert.deepEqual(plan(daily, next, at("2026-05-03T12:00:00Z")), [
    { expected: next, instant: 0, next: at("2026-05-04T03:00:00Z") },
  ]);
});

test("plan catch-up: every missed instant, in order; at most the last MAX_CATCH_UP", () => {
  const i = instants({ everyMs: 1000, missed: "catch-up" });
  assert.deepEqual(plan(i, 10_000, 12_500), [
    { expected: 10_000, instant: 10_000, next: 11_000 },
    { expected: 11_000, instant: 11_000, next: 12_000 },
    { expected: 12_000, instant: 12_000, next: 13_000 },
  ]);
  const long = plan(i, 1_000, 1_000 + 5_000 * 1000);
  assert.equal(long.length, MAX_CATCH_UP);
  assert.deepEqual(long[0], { expected: 1_000, instant: 1_000 + 4_001 * 1000, next: 1_000 + 4_002 * 1000 });
  assert.equal(long.at(-1)!.instant, 1_000 + 5_000 * 1000);
  const cron = instants({ cron: "0 * * * *", missed: "catch-up" });
  const hours = plan(cron, at("2026-05-01T00:00:00Z"), at("2026-05-01T02:30:00Z"));
  assert.deepEqual(
    hours.map((f) => iso(f.instant)),
    ["2026-05-01T00:00:00.000Z", "2026-05-01T01:00:00.000Z", "2026-05-01T02:00:00.000Z"],
  );
});

test("plan: the last instant before endAt ends the schedule (next 0)", () => {
  const i = instants({ everyMs: 1000, endAt: 12_000, missed: "catch-up" });
  assert.deepEqual(plan(i, 11_000, 15_000), [
    { expected: 11_000, instant: 11_000, next: 12_000 },
    { expected: 12_000, instant: 12_000, next: 0 },
  ]);
});

test("spec checks: each bad option is named, both cron and everyMs refused", () => {
  const bad: [Record<string, unknown>, string][] = [
    [{ cron: "* * * * *", everyMs: 10 }, "cron"],
    [{}, "cron"],
    [{ cron: "61 * * * *" }, "cron"],
    [{ cron: "not a cron" }, "cron"],
    [{ cron: 5 }, "cron"],
    [{ everyMs: 0 }, "everyMs"],
    [{ everyMs: -5 }, "everyMs"],
    [{ everyMs: 1.5 }, "everyMs"],
    [{ cron: "* * * * *", tz: "Mars/Base" }, "tz"],
    [{ everyMs: 10, tz: "UTC" }, "tz"],
    [{ everyMs: 10, startAt: -1 }, "startAt"],
    [{ everyMs: 10, startAt: 5000, endAt: 4000 }, "endAt"],
    [{ everyMs: 10, limit: 0 }, "limit"],
    [{ everyMs: 10, missed: "later" }, "missed"],
    [{ everyMs: 10, graceMs: -1 }, "graceMs"],
    [{ everyMs: 10, opts: { priority: 1.5 } }, "opts.priority"],
    [{ everyMs: 10, opts: { maxAttempts: -1 } }, "opts.maxAttempts"],
    [{ everyMs: 10, opts: { timeoutMs: "5" } }, "opts.timeoutMs"],
  ];
  for (const [options, argument] of bad) {
    assert.throws(
      () => checkSchedule({ payload: "p", ...options }),
      (err: unknown) => err instanceof InvalidArgumentError && err.argument === argument,
      JSON.stringify(options),
    );
  }
  assert.throws(() => checkSchedule({ everyMs: 10 }), /invalid payload/);
  assert.throws(() => checkSchedule({ payload: "p", cron: "* * * * *", everyMs: 5 }), {
    message: "invalid cron: give either cron or everyMs, not both",
  });
});

test("spec text: one order, read back to the same spec", () => {
  const { spec } = checkSchedule({
    payload: "",
    missed: "catch-up",
    tz: "Europe/Berlin",
    cron: "0 9 * * 1-5",
    limit: 3,
  });
  const text = specText(spec);
  assert.equal(
    text,
    '{"cron":"0 9 * * 1-5","tz":"Europe/Berlin","limit":3,"missed":"catch-up","graceMs":5000}',
  );
  assert.deepEqual(parseSpec(text), spec);
});

test("instant ids: valid branded ids, the same in every process, sorted by instant, per schedule", () => {
  const a = instantId("q", "nightly", at("2026-05-01T03:00:00Z"));
  assert.ok(isValidBrandedId(a));
  assert.equal(a, instantId("q", "nightly", at("2026-05-01T03:00:00Z")));
  assert.ok(a < instantId("q", "nightly", at("2026-05-01T03:00:00.001Z")));
  assert.notEqual(a, instantId("q", "hourly", at("2026-05-01T03:00:00Z")));
  assert.notEqual(a, instantId("p", "nightly", at("2026-05-01T03:00:00Z")));
  assert.equal(a.slice(3, 10), instantId("q", "other", at("2026-05-01T03:00:00Z")).slice(3, 10));
});

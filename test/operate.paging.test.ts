/** The pure parts of listing jobs: each state's set and order, page bounds, the lanes' merge. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgumentError } from "../src/errors.js";
import { assertJobState, LISTING, listedOf, mergePage, pageOf } from "../src/operate/paging.js";
import { jobInfo } from "../src/operate/row.js";

test("each state lists its set, finished states newest first", () => {
  assert.deepEqual(
    Object.entries(LISTING).map(([s, l]) => [s, l.set, l.newestFirst]),
    [
      ["pending", "pending", false],
      ["scheduled", "schedule", false],
      ["active", "active", false],
      ["completed", "done", true],
      ["dead", "dead", true],
      ["waiting", "waiting", false],
    ],
  );
  assert.equal(assertJobState("dead"), "dead");
  for (const bad of ["sleeping", "", "toString", 3, undefined]) {
    assert.throws(() => assertJobState(bad), InvalidArgumentError, String(bad));
  }
});

test("page bounds: defaults, and refusals that name the option", () => {
  assert.deepEqual(pageOf(undefined), { offset: 0, limit: 50 });
  assert.deepEqual(pageOf({ offset: 5, limit: 1000 }), { offset: 5, limit: 1000 });
  assert.throws(() => pageOf({ limit: 0 }), /limit: must be an integer from 1 to 1000, got 0/);
  assert.throws(() => pageOf({ limit: 1.5 }), /limit/);
  assert.throws(() => pageOf({ offset: -1 }), /offset: must be a non-negative integer, got -1/);
  assert.throws(() => pageOf(null as never), /options: must be an object/);
});

test("a flat WITHSCORES reply becomes listed ids", () => {
  assert.deepEqual(listedOf("q", [Buffer.from("JOBa"), Buffer.from("5"), "JOBb", "-1"]), [
    { id: "JOBa", lane: "q", score: 5 },
    { id: "JOBb", lane: "q", score: -1 },
  ]);
});

test("lanes merge by score then id, ascending or newest first, then the page is cut", () => {
  const a = [
    { id: "JOB1", lane: "a", score: 0 },
    { id: "JOB4", lane: "a", score: 0 },
    { id: "JOB5", lane: "a", score: 9 },
  ];
  const b = [
    { id: "JOB2", lane: "b", score: 0 },
    { id: "JOB3", lane: "b", score: 1 },
  ];
  assert.deepEqual(
    mergePage([a, b], false, 0, 10).map((l) => l.id),
    ["JOB1", "JOB2", "JOB4", "JOB3", "JOB5"],
  );
  assert.deepEqual(
    mergePage([a, b], false, 1, 2).map((l) => l.id),
    ["JOB2", "JOB4"],
  );
  assert.deepEqual(
    mergePage([a, b], true, 0, 3).map((l) => l.id),
    ["JOB5", "JOB3", "JOB4"],
  );
  assert.deepEqual(mergePage([], true, 0, 3), []);
});

test("a row's fields become a JobInfo; an empty row is none", () => {
  assert.equal(jobInfo("JOB1", "q", {}), null);
  const info = jobInfo("JOB1", "q", {
    state: Buffer.from("dead"),
    attempts: Buffer.from("3"),
    payload: Buffer.from("p"),
    max_attempts: Buffer.from("3"),
    error: Buffer.from("boom"),
    "log:2": Buffer.from("second"),
    "log:1": Buffer.from("first"),
  })!;
  assert.equal(info.state, "dead");
  assert.equal(info.attempts, 3);
  assert.equal(info.maxAttempts, 3);
  assert.equal(info.error, "boom");
  assert.deepEqual(info.logs, ["first", "second"]);
  assert.equal(info.priority, 0);
});

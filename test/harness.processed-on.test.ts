/**
 * The harness on a row's `processed_on` (docs/protocol.md, "The job row"): the value a lease
 * writes is server time, so it is matched to the call's window and compared as a token, like a
 * time score — kept while a step leaves it, reported when out of the window or written on a row
 * the call did not lease; a native lease that drops it, or a verb that writes it without leasing,
 * is caught.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { normalize } from "../harness/compare.js";
import type { RawDump, RawValue } from "../harness/dump.js";
import type { Fault } from "../harness/executors.js";
import { rowKey } from "../harness/verbs.js";
import { faultFailure } from "./support/harness-fault.js";

const J1 = "JOB00000000001";
const b = (s: string) => Buffer.from(s, "latin1");
const hash = (fields: [string, string][]): RawValue => ({
  type: "hash",
  fields: fields.map(([f, v]): [Buffer, Buffer] => [b(f), b(v)]),
});

describe("processed_on in the comparison", () => {
  const queues = [{ physical: "h1As", logical: "A" }];
  const row = `emq:{h1As}:job:${J1}`;
  const dump = (on: string): RawDump =>
    new Map([
      [
        row,
        hash([
          ["state", "active"],
          ["processed_on", on],
        ]),
      ],
    ]);
  const window = { lo: 1_000_000, hi: 1_000_002 };
  const field = (n: ReturnType<typeof normalize>) =>
    n.norm.get(`emq:{A}:job:${J1}`)?.entries.find(([f]) => f === "processed_on")?.[1];

  test("a lease's now becomes the step's token; a step that leaves it keeps the token", () => {
    const first = normalize(dump("1000001"), { queues, step: 4, window, leased: [row] });
    assert.deepEqual([first.issues, field(first)], [[], "T4"]);
    const again = normalize(dump("1000001"), {
      queues,
      step: 5,
      prev: { raw: dump("1000001"), norm: first.norm },
      window: { lo: 5, hi: 6 },
      leased: [],
    });
    assert.deepEqual([again.issues, field(again)], [[], "T4"]);
    const seed = normalize(dump("7"), { queues, step: 1 });
    assert.deepEqual([seed.issues, field(seed)], [[], "=7"]);
  });

  test("reported: out of the call's window on a leased row, and new on a row the call did not lease", () => {
    const late = normalize(dump("1000003"), { queues, step: 2, window, leased: [row] });
    assert.deepEqual(late.issues, [
      `emq:{A}:job:${J1} processed_on "1000003" is not a now in [1000000, 1000002]`,
    ]);
    assert.equal(field(late), "?1000003");
    const stray = normalize(dump("1000001"), { queues, step: 2, window, leased: [] });
    assert.deepEqual(stray.issues, [
      `emq:{A}:job:${J1} processed_on became "1000001" on a row this call did not lease`,
    ]);
  });
});

describe("the harness catches a wrong processed_on on the native side", () => {
  test("a claim that leaves no processed_on", async () => {
    const fault: Fault = {
      verb: "CLAIM",
      writes: (side) => [["HDEL", rowKey(side.name("A"), J1), "processed_on"]],
    };
    const { problems } = await faultFailure(fault, /^CLAIM: one job \(window\)$/);
    assert.match(
      problems,
      /emq:\{A\}:job:JOB00000000001 field "processed_on": script "T\d+" vs native absent/,
    );
  });

  test("a verb that writes processed_on without leasing (EXTEND)", async () => {
    const fault: Fault = {
      verb: "EXTEND",
      writes: (side) => [["HSET", rowKey(side.name("A"), J1), "processed_on", "1"]],
    };
    const { problems } = await faultFailure(fault, /^EXTEND: renews the lease \(window\)$/);
    assert.match(
      problems,
      /native: emq:\{A\}:job:JOB00000000001 processed_on became "1" on a row this call did not lease/,
    );
  });
});

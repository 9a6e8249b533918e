import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assertBackoff, backoffDelay } from "../src/backoff.js";
import { InvalidArgumentError, InvalidBackoffError, InvalidResultError } from "../src/errors.js";
import { encodeResult, retryDelay } from "../src/worker/outcome.js";

describe("backoff", () => {
  test("fixed is constant", () => {
    for (const attempt of [1, 2, 10])
      assert.equal(backoffDelay({ type: "fixed", delayMs: 250 }, attempt, null), 250);
  });
  test("exponential doubles per attempt, capped, jitter within ±jitter", () => {
    const opt = { type: "exponential", delayMs: 100, maxDelayMs: 1000 } as const;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((a) => backoffDelay(opt, a, null)),
      [100, 200, 400, 800, 1000, 1000],
    );
    const jittered = { type: "exponential", delayMs: 1000, jitter: 0.2 } as const;
    assert.equal(
      backoffDelay(jittered, 1, null, () => 0),
      800,
    );
    assert.equal(
      backoffDelay(jittered, 1, null, () => 1),
      1200,
    );
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(jittered, 3, null);
      assert.ok(d >= 3200 && d <= 4800, String(d));
    }
  });
  test("custom function gets attempt and error; a bad result is a typed error", () => {
    const seen: unknown[] = [];
    const fn = (attempt: number, err: unknown) => {
      seen.push(attempt, err);
      return attempt * 7;
    };
    assert.equal(backoffDelay(fn, 3, "boom"), 21);
    assert.deepEqual(seen, [3, "boom"]);
    assert.throws(() => backoffDelay(() => -1, 1, null), InvalidArgumentError);
    assert.throws(() => backoffDelay(() => Number.NaN, 1, null), InvalidArgumentError);
  });
  test("assertBackoff refuses malformed options", () => {
    for (const bad of [
      null,
      {},
      { type: "linear", delayMs: 1 },
      { type: "fixed" },
      { type: "fixed", delayMs: -1 },
      { type: "exponential", delayMs: 1, jitter: 2 },
    ]) {
      assert.throws(() => assertBackoff(bad), InvalidArgumentError, JSON.stringify(bad));
    }
    assertBackoff({ type: "fixed", delayMs: 0 });
    assertBackoff(() => 1);
  });
});

describe("retryDelay (the worker's use of a backoff)", () => {
  test("a usable delay passes through", () => {
    assert.deepEqual(retryDelay({ type: "fixed", delayMs: 250 }, 1, new Error("x")), { delayMs: 250 });
  });
  for (const [label, option] of [
    ["NaN", () => Number.NaN],
    ["negative", () => -1],
    ["1e300", () => 1e300],
    ["past the protocol's 15 digits", () => 1e15],
    [
      "a throw",
      () => {
        throw new Error("boom");
      },
    ],
  ] as const) {
    test(`${label} → delay 0 and an InvalidBackoffError saying why`, () => {
      const { delayMs, problem } = retryDelay(option as () => number, 2, new Error("handler"));
      assert.equal(delayMs, 0);
      assert.ok(problem instanceof InvalidBackoffError);
      assert.equal(problem.code, "EMQ_INVALID_BACKOFF");
      assert.match(
        problem.message,
        /the backoff gave no usable delay \(.+\): the job was failed with no delay/,
      );
    });
  }
  test("the built-in exponential never goes past the protocol's largest delay", () => {
    const ms = backoffDelay({ type: "exponential", delayMs: 1000 }, 200, null, () => 0.5);
    assert.equal(ms, 999_999_999_999_999);
  });
});

describe("encodeResult", () => {
  test("strings and bytes as they are, nothing as empty, other values as JSON", () => {
    assert.equal(encodeResult("a"), "a");
    const bytes = new Uint8Array([0, 1]);
    assert.equal(encodeResult(bytes), bytes);
    assert.equal(encodeResult(undefined), "");
    assert.equal(encodeResult(null), "");
    assert.equal(encodeResult({ a: [1] }), '{"a":[1]}');
  });
  for (const [label, value] of [
    ["a BigInt", 10n],
    ["a symbol", Symbol("s")],
    ["a function", () => 1],
    [
      "a cycle",
      (() => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      })(),
    ],
  ] as const) {
    test(`${label} → InvalidResultError naming what to return`, () => {
      assert.throws(
        () => encodeResult(value),
        (e: unknown) =>
          e instanceof InvalidResultError &&
          e.code === "EMQ_INVALID_RESULT" &&
          /^the handler's result cannot be stored: .+\. Return a string, bytes, or a JSON-serializable value\.$/.test(
            e.message,
          ),
      );
    });
  }
});

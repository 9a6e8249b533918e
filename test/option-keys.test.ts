/**
 * The key tables every options object is checked against (src/option-keys.ts): absent is `{}`,
 * a non-object, an unknown key (another library's name with its EchoMQ one, a close misspelling
 * with "did you mean", else the keys taken) and a value of the wrong kind are refused naming
 * the key.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { InvalidArgumentError } from "../src/index.js";
import { checkKeys, closest, editDistance, type OptionTable } from "../src/option-keys.js";

const TABLE: OptionTable = {
  of: "add",
  keys: { delay: "number", id: "any", tls: ["boolean", "object"], payload: ["string", "bytes"], at: "date" },
  foreign: { attempts: "maxAttempts", lifo: "EchoMQ has no LIFO order" },
};

const refused = (argument: string, message: string) => (e: unknown) =>
  e instanceof InvalidArgumentError && e.argument === argument && e.message === message;

describe("checkKeys", () => {
  test("absent is no options; a declared key of its kind passes, undefined counts as absent", () => {
    assert.deepEqual(checkKeys(undefined, TABLE), {});
    const ok = { delay: 5, id: 7, tls: true, payload: Buffer.from("x"), at: new Date(0), lifo: undefined };
    assert.throws(
      () => checkKeys(ok, TABLE),
      /takes no option "lifo"/,
      "an unknown key is refused even undefined",
    );
    const { lifo: _, ...declared } = ok;
    assert.equal(checkKeys(declared, TABLE), declared);
    assert.deepEqual(checkKeys({ tls: { ca: "x" }, delay: undefined }, TABLE), {
      tls: { ca: "x" },
      delay: undefined,
    });
  });

  const cases: [string, unknown, string, string][] = [
    ["a string", "str", "options", "invalid options: must be an object, got string"],
    ["a number", 42, "options", "invalid options: must be an object, got number"],
    ["an array", [1], "options", "invalid options: must be an object, got array"],
    ["true", true, "options", "invalid options: must be an object, got boolean"],
    ["null", null, "options", "invalid options: must be an object, got null"],
    [
      "a foreign name with an EchoMQ key",
      { attempts: 3 },
      "attempts",
      `invalid attempts: add takes no option "attempts" (BullMQ's name): use maxAttempts`,
    ],
    [
      "a foreign name with a hint",
      { lifo: true },
      "lifo",
      `invalid lifo: add takes no option "lifo" (BullMQ's name): EchoMQ has no LIFO order`,
    ],
    [
      "a swap of two letters",
      { dealy: 5000 },
      "dealy",
      `invalid dealy: add takes no option "dealy": did you mean delay?`,
    ],
    [
      "another case",
      { DELAY: 1 },
      "DELAY",
      `invalid DELAY: add takes no option "DELAY": did you mean delay?`,
    ],
    [
      "no close key",
      { burst: 5 },
      "burst",
      `invalid burst: add takes no option "burst"; it takes delay, id, tls, payload, at`,
    ],
    ["a wrong kind", { delay: "5" }, "delay", 'invalid delay: must be a number, got string "5"'],
    ["none of several kinds", { tls: 1 }, "tls", "invalid tls: must be a boolean or an object, got number"],
    [
      "not bytes",
      { payload: 5 },
      "payload",
      "invalid payload: must be a string or bytes (Uint8Array/Buffer), got number",
    ],
    ["not a Date", { at: "today" }, "at", 'invalid at: must be a Date, got string "today"'],
    ["null for a number", { delay: null }, "delay", "invalid delay: must be a number, got null"],
  ];
  for (const [label, value, argument, message] of cases) {
    test(`${label} → InvalidArgumentError naming ${argument}`, () => {
      assert.throws(() => checkKeys(value, TABLE), refused(argument, message));
    });
  }

  test("the key is named with its place (`where`)", () => {
    assert.throws(
      () => checkKeys({ attempts: 1 }, TABLE, "jobs[2]", "jobs[2]."),
      refused(
        "jobs[2].attempts",
        `invalid jobs[2].attempts: add takes no option "attempts" (BullMQ's name): use maxAttempts`,
      ),
    );
    assert.throws(
      () => checkKeys(7, TABLE, "jobs[2]", "jobs[2]."),
      refused("jobs[2]", "invalid jobs[2]: must be an object, got number"),
    );
  });

  test("the source of foreign names is the table's", () => {
    const connect: OptionTable = {
      of: "connect",
      keys: { connectTimeoutMs: "number" },
      source: "ioredis",
      foreign: { connectTimeout: "connectTimeoutMs" },
    };
    assert.throws(
      () => checkKeys({ connectTimeout: 10 }, connect),
      refused(
        "connectTimeout",
        `invalid connectTimeout: connect takes no option "connectTimeout" (ioredis's name): use connectTimeoutMs`,
      ),
    );
  });
});

describe("closest", () => {
  test("at most 2 edits, fewer than the shorter name's length", () => {
    assert.equal(editDistance("dealy", "delay"), 1);
    assert.equal(editDistance("evryMs", "everyMs"), 1);
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.equal(closest("evryMs", ["cron", "everyMs", "tz"]), "everyMs");
    assert.equal(closest("maxAtempts", ["maxAttempts", "priority"]), "maxAttempts");
    assert.equal(closest("xy", ["id", "tz"]), undefined, "two letters replaced is no misspelling of two");
    assert.equal(closest("concurency", ["count", "concurrency"]), "concurrency");
    assert.equal(closest("burst", ["rate", "concurrency", "group"]), undefined);
  });
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { InvalidArgumentError } from "../src/index.js";
import { InvalidIdError, InvalidQueueNameError } from "../src/errors.js";
import { crc16, hashtag, jobKey, queueKey, slot, isValidQueue, assertValidQueue } from "../src/protocol.js";
import type { KeyType } from "../src/keyspace.js";

describe("queueKey", () => {
  test("builds emq:{q}:<type>", () => {
    assert.equal(queueKey("orders", "pending"), "emq:{orders}:pending");
    assert.equal(queueKey("", "pending"), "emq:{}:pending");
    assert.equal(queueKey("a:b", ""), "emq:{a:b}:");
  });
  test("non-string input throws typed errors (InvalidQueueNameError, InvalidArgumentError)", () => {
    assert.throws(() => queueKey(1 as unknown as string, "pending"), InvalidQueueNameError);
    assert.throws(
      () => queueKey("q", null as unknown as KeyType),
      (e: unknown) => e instanceof InvalidArgumentError && e.argument === "type",
    );
  });
});

describe("jobKey", () => {
  test("appends a valid branded id to job:", () => {
    assert.equal(jobKey("orders", "JOB0Nb1VTbfnu4"), "emq:{orders}:job:JOB0Nb1VTbfnu4");
  });
  for (const bad of [
    "",
    "JOB",
    "JOB0Nb1VTbfnu",
    "JOB0Nb1VTbfnu45",
    "job0Nb1VTbfnu4",
    "JOB0Nb1VTbf-u4",
    "JOB0Nb1VTbfnü",
  ]) {
    test(`refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(() => jobKey("orders", bad), InvalidIdError);
    });
  }
  test("refuses a non-string id", () => {
    assert.throws(() => jobKey("orders", 42 as unknown as string), InvalidIdError);
  });
});

describe("queue names", () => {
  test("1 to 255 bytes of UTF-8; braces, control characters and the empty name are invalid", () => {
    const longest = "x".repeat(255);
    for (const ok of ["orders", "a:b", "émoji 🚀", "a b", longest, "é".repeat(127)]) {
      assert.equal(isValidQueue(ok), true, ok);
    }
    const bad = ["", "{", "}", "a}b", "{a}", "a\u0000b", "a\nb", "a\rb", "\t", "a\u001fb", "a\u007fb"];
    for (const name of [...bad, `${longest}x`, "é".repeat(128)])
      assert.equal(isValidQueue(name), false, name);
    assert.equal(isValidQueue(7), false);
    assert.equal(isValidQueue(undefined), false);
  });
  test("assertValidQueue names the rule and the offending name", () => {
    assert.throws(
      () => assertValidQueue("a}b"),
      (err: unknown) =>
        err instanceof InvalidQueueNameError &&
        /"a}b"/.test(err.message) &&
        /must not contain '\{', '\}' \(a brace would move the cluster hashtag\) or a control character/.test(
          err.message,
        ),
    );
    assert.throws(
      () => assertValidQueue(5),
      (err: unknown) => err instanceof InvalidQueueNameError && /string/.test(err.message),
    );
  });
});

describe("slot (pure)", () => {
  test("CRC16-XMODEM reference vector", () => {
    assert.equal(crc16(Buffer.from("123456789")), 0x31c3);
  });
  test("hashtag rules: first {, first } after it, empty tag means whole key", () => {
    const tag = (k: string) => Buffer.from(hashtag(Buffer.from(k))).toString();
    assert.equal(tag("emq:{orders}:pending"), "orders");
    assert.equal(tag("{}abc"), "{}abc");
    assert.equal(tag("a{b}{c}"), "b");
    assert.equal(tag("a{{b}}"), "{b");
    assert.equal(tag("abc{"), "abc{");
    assert.equal(tag("a}b{c"), "a}b{c");
  });
  test("known slots", () => {
    assert.equal(slot("foo"), 12182);
    assert.equal(slot("{user1000}.following"), slot("{user1000}.followers"));
    assert.equal(slot("emq:{q}:pending"), slot("emq:{q}:job:JOB0Nb1VTbfnu4"));
  });
});

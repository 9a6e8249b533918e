import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { slot } from "../src/protocol.js";
import { rawCommands } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

/** Keys with braces in every position, empty tags, and non-ASCII bytes. */
const keyBytes = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(0x7b, 0x7d) }, // '{' and '}'
    { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
    { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }, // non-ASCII bytes
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x1f }) },
  ),
  { minLength: 0, maxLength: 24 },
);

describe("slot() against a real cluster-enabled server", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ cluster: true });
  });
  after(() => server.stop());

  test("equals CLUSTER KEYSLOT on 2,000 generated keys", async () => {
    const keys = fc.sample(keyBytes, { numRuns: 2000, seed: 20261129 }).map((b) => Buffer.from(b));
    keys.push(
      ...[
        "",
        "{}",
        "{}{a}",
        "a{}b{c}",
        "{a",
        "a}",
        "}{",
        "{{}}",
        "emq:{orders}:pending",
        "emq:{}:pending",
      ].map((k) => Buffer.from(k)),
      Buffer.from("emq:{ü}:job:JOB0Nb1VTbfnu4", "utf8"),
    );
    const replies = await rawCommands(
      server.port,
      keys.map((k) => ["CLUSTER", "KEYSLOT", k]),
    );
    let braces = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key.includes(0x7b) && key.includes(0x7d)) braces += 1;
      assert.equal(slot(key), Number(replies[i]), `key ${key.toString("hex")}`);
    }
    assert.ok(braces > 500, `the sample exercises hashtags (${braces} keys with both braces)`);
  });

  test("string keys are hashed as UTF-8, like the server sees them", async () => {
    const [reply] = await rawCommands(server.port, [
      ["CLUSTER", "KEYSLOT", Buffer.from("emq:{ü}:x", "utf8")],
    ]);
    assert.equal(slot("emq:{ü}:x"), Number(reply));
  });
});

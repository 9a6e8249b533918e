/**
 * protocol/schema.json describes the protocol data: protocol.json and every verbs/<verb>.json
 * validate against it, and the schema refuses the shapes it exists to catch.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readProtocolFiles } from "../src/verbs/index.js";
import { validate } from "../src/verbs/schema.js";

// The files as the one reader reads them (src/verbs/data.ts), each checked here by hand.
const files = readProtocolFiles();
const schema = JSON.parse(files.schema!) as Record<string, unknown>;
const defs = schema.$defs as Record<string, Record<string, unknown>>;
const read = (name: string): Record<string, unknown> =>
  JSON.parse(name === "protocol.json" ? files.protocol : files.verbs.get(name.replace(/^verbs\//, ""))!);
const verbFiles = [...files.verbs.keys()];

describe("protocol/schema.json", () => {
  test("protocol.json and every verb file validate", () => {
    assert.deepEqual(validate(schema, defs.protocol!, read("protocol.json")), []);
    assert.ok(verbFiles.length > 30);
    for (const file of verbFiles)
      assert.deepEqual(validate(schema, defs.verb!, read(`verbs/${file}`)), [], file);
  });

  test("refuses an unknown field, a missing one, a wrong type and a bad class, naming each", () => {
    const claim = read("verbs/claim.json");
    const { family: _family, ...noFamily } = claim;
    const bad = { ...noFamily, core: true, class: "write", keys: "pending" };
    assert.deepEqual(validate(schema, defs.verb!, bad).sort(), [
      '$.class: "write" is not one of admission, drain, read',
      "$.core: not a field the schema knows",
      "$.keys: is string, not array",
      "$: lacks family",
    ]);
  });

  test("refuses a derived key not relative to the base, of an unknown type, or touched by no verb", () => {
    const protocol = read("protocol.json") as { derived_keys: Record<string, unknown> };
    const bad = {
      ...protocol,
      derived_keys: {
        ...protocol.derived_keys,
        x: { pattern: "emq:{q}:x", type: "list", holds: "h", verbs: [] },
      },
    };
    assert.deepEqual(validate(schema, defs.protocol!, bad).sort(), [
      '$.derived_keys.x.pattern: "emq:{q}:x" does not match ^<base>[a-z]+(:<[a-z]+>)?$',
      '$.derived_keys.x.type: "list" is not one of string, hash, sorted set, stream, channel, none',
      "$.derived_keys.x.verbs: too few items",
    ]);
  });
});

/**
 * protocol/schema.json describes the protocol data: protocol.json and every verbs/<verb>.json
 * validate against it, and the schema refuses the shapes it exists to catch.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { validate } from "./support/schema.js";

const folder = new URL("../protocol/", import.meta.url);
const read = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(name, folder), "utf8"));
const schema = read("schema.json");
const defs = schema.$defs as Record<string, Record<string, unknown>>;
const verbFiles = readdirSync(new URL("verbs/", folder)).filter((f) => f.endsWith(".json"));

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
});

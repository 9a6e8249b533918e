/**
 * The protocol is written once, as data (`protocol/`): these tests prove that every piece made
 * from it agrees with it — the data's own consistency, the script twins (their first line and
 * their header form), the host's engines, the harness's verb table and the verb tables of
 * docs/protocol.md. (The module's registration and key specs: test/module.registration.test.ts.)
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { VERBS as HARNESS_VERBS } from "../harness/verbs.js";
import { missing, render } from "../scripts/protocol-doc.js";
import { engineFor } from "../src/engine/index.js";
import { KEY_TYPES, keyOf } from "../src/keyspace.js";
import { type DerivedKey, parseProtocol, readProtocolFiles } from "../src/verbs/index.js";
import {
  anchorOf,
  formOf,
  JOB_CORE,
  JOB_CORE_VERBS,
  NATIVE_ONLY_VERBS,
  PROTOCOL,
  SCRIPTS,
  scriptFor,
  VERB_SPECS,
} from "../src/protocol.js";

const scriptsDir = new URL("../src/scripts/", import.meta.url);
const lua = (name: string) => readFileSync(new URL(`${name}.lua`, scriptsDir), "utf8");

describe("the protocol data", () => {
  test("the job-core verbs, the specification's fourteen first, each described once, in EMQ.VERSION order", () => {
    const fourteen =
      "ENQUEUE ADD CLAIM EXTEND COMPLETE FAIL RETRY PROMOTE REAP REMOVE PAUSE RESUME RESCHEDULE REQUEUE";
    assert.deepEqual(PROTOCOL.job_core.slice(0, 14), fourteen.split(" "));
    assert.equal(new Set(PROTOCOL.job_core).size, PROTOCOL.job_core.length);
    assert.deepEqual(JOB_CORE_VERBS, PROTOCOL.job_core);
    for (const verb of PROTOCOL.job_core) assert.equal(VERB_SPECS.get(verb)?.core, true, verb);
    const cores = [...VERB_SPECS.values()].filter((s) => s.core).map((s) => s.verb);
    assert.deepEqual(cores.sort(), [...PROTOCOL.job_core].sort());
    // Membership is stated once, in protocol.json: no verb file restates it.
    for (const [file, text] of readProtocolFiles().verbs)
      assert.equal("core" in JSON.parse(text), false, file);
  });

  test("every key names a known slot and known flags; keyed commands have one anchor", () => {
    for (const spec of VERB_SPECS.values()) {
      for (const key of spec.keys) {
        assert.ok(key.slot in PROTOCOL.key_slots, `${spec.verb}: slot ${key.slot}`);
        for (const flag of key.flags)
          assert.ok(PROTOCOL.key_flags.includes(flag), `${spec.verb}: flag ${flag}`);
      }
      if (spec.keys.length > 0) {
        assert.equal(spec.keys.filter((k) => k.anchor).length, 1, `${spec.verb}: one anchor`);
        assert.notEqual(spec.keys[anchorOf(spec)]?.slot, "base", `${spec.verb}: the base cannot anchor`);
      }
      assert.ok(spec.class in PROTOCOL.classes, `${spec.verb}: class ${spec.class}`);
    }
  });

  test("every grammar is known; every time offset names a value", () => {
    for (const spec of VERB_SPECS.values()) {
      const slots = spec.values.map((v) => v.slot);
      for (const value of spec.values) {
        if (value.grammar) {
          assert.ok(value.grammar in PROTOCOL.grammars, `${spec.verb}: grammar ${value.grammar}`);
          assert.ok(value.name, `${spec.verb}: ${value.slot} has a grammar, so a refusal name`);
        }
      }
      for (const t of spec.times)
        if (t.offset !== null) assert.ok(slots.includes(t.offset), `${spec.verb}: ${t.offset}`);
      if (spec.reply_time) assert.ok(slots.includes(spec.reply_time.offset), spec.verb);
    }
  });
});

describe("the keys of the data", () => {
  test("each derived key's verbs are exactly the script twins whose assembled body derives it", () => {
    for (const [name, key] of Object.entries(PROTOCOL.derived_keys)) {
      const type = KEY_TYPES.get(name as DerivedKey)!;
      const derives = new RegExp(`\\.\\. ?'${type}'`);
      const twins = [...VERB_SPECS.values()].filter(
        (s) => s.script && derives.test(scriptFor(s.verb).source),
      );
      const declared = key.verbs.filter((verb) => VERB_SPECS.get(verb)!.script !== null);
      assert.deepEqual(declared, twins.map((s) => s.verb).sort(), name);
      // BCLAIM runs the claim: it touches what CLAIM does.
      assert.equal(key.verbs.includes("BCLAIM"), key.verbs.includes("CLAIM"), `${name}: BCLAIM as CLAIM`);
    }
  });

  test("every queue key is built from its pattern in the data", () => {
    for (const [name, key] of Object.entries({ ...PROTOCOL.key_slots, ...PROTOCOL.derived_keys })) {
      if (name === "version") continue;
      const whole = key.pattern.replace("<base>", PROTOCOL.key_slots.base.pattern);
      const expected = whole.replace("{q}", "{o:1}").replace(/<[a-z]+>$/, "P");
      assert.equal(keyOf("o:1", name as DerivedKey, whole.endsWith(">") ? "P" : ""), expected, name);
    }
  });

  test("the one reader refuses data whose references name nothing, naming each", () => {
    const files = readProtocolFiles();
    const protocol = JSON.parse(files.protocol);
    protocol.job_core.push("NOPE");
    protocol.derived_keys.limits.verbs.push("ZAP");
    const claim = JSON.parse(files.verbs.get("claim.json")!);
    claim.keys[0].slot = "nowhere";
    const verbs = new Map(files.verbs).set("claim.json", JSON.stringify(claim));
    assert.throws(
      () => parseProtocol({ ...files, protocol: JSON.stringify(protocol), verbs }),
      (e: unknown) =>
        e instanceof Error &&
        e.message.includes("verbs CLAIM: slot: nowhere is not declared in protocol.json") &&
        e.message.includes("job_core: NOPE is no verb file") &&
        e.message.includes("derived_keys.limits: ZAP is no verb file"),
    );
    const bad = JSON.parse(files.protocol);
    bad.derived_keys.rate.type = "list";
    assert.throws(
      () => parseProtocol({ ...files, protocol: JSON.stringify(bad) }),
      /protocol.json.derived_keys.rate.type: "list" is not one of/,
    );
  });
});

describe("the script twins", () => {
  test("each job-core verb with a script has its .lua; every .lua belongs to one verb", () => {
    const files = readdirSync(scriptsDir)
      .filter((f) => f.endsWith(".lua"))
      .map((f) => f.slice(0, -4))
      .sort();
    const named = JOB_CORE.flatMap((s) => (s.script ? [s.script] : [])).sort();
    assert.deepEqual(files, named);
    assert.deepEqual(
      [...SCRIPTS.keys()],
      JOB_CORE.filter((s) => s.script).map((s) => s.verb),
    );
    assert.deepEqual(NATIVE_ONLY_VERBS, []); // RESCHEDULE has reschedule.lua since the job model
  });

  for (const spec of JOB_CORE.filter((s) => s.script)) {
    test(`${spec.script}.lua: its first line is its class's shebang, its header names its form`, () => {
      const source = lua(spec.script!);
      const lines = source.split("\n");
      assert.equal(lines[0], PROTOCOL.classes[spec.class].shebang, "shebang");
      const form = lines.find((l) => l.startsWith("-- Form:"));
      assert.equal(form?.replace(/^-- Form:\s+/, ""), formOf(spec));
      // The form's shape checks are made from the same data (the piece protocol/form).
      assert.ok(source.includes('--- @include "protocol/form"\n'), "includes protocol/form");
      assert.ok(scriptFor(spec.verb).source.includes(`local form = '${formOf(spec)}'\n`), "assembled form");
    });
  }
});

describe("the pieces made from the data", () => {
  test("the engines: the scripts engine runs the verbs with a twin, the native engine every verb", () => {
    const sender = { send: async () => null, sendAll: async () => [], loadScript: async () => null };
    const scripts = engineFor(4).create(sender);
    const native = engineFor(6).create(sender);
    for (const verb of JOB_CORE_VERBS) {
      assert.equal(scripts.runs(verb), SCRIPTS.has(verb), verb);
      assert.equal(native.runs(verb), true, verb);
    }
    assert.equal(scripts.claimReadsPause, false);
    assert.equal(native.claimReadsPause, true);
  });

  test("the harness's verb table is the data's", () => {
    assert.deepEqual(
      HARNESS_VERBS.map((v) => [v.verb, v.form, v.keys, v.anchor, v.admission, v.script]),
      JOB_CORE.map((s) => [
        s.verb,
        formOf(s),
        s.keys.map((k) => k.slot),
        anchorOf(s),
        s.class === "admission",
        s.script,
      ]),
    );
  });

  test("docs/protocol.md's generated tables are what the data says, one per command", () => {
    const doc = readFileSync(new URL("../docs/protocol.md", import.meta.url), "utf8");
    assert.deepEqual(missing(doc), []);
    assert.equal(render(doc), doc, "run npx tsx scripts/protocol-doc.ts and commit docs/protocol.md");
  });
});

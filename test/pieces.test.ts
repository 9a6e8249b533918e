/**
 * Scripts assembled from pieces (src/scripts/assemble.ts): each piece once, the pieces it includes
 * first, cycles and unknown pieces refused; a piece's change moves the pinned digests of exactly
 * the scripts that include it; no Lua function is defined in two files.
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { REPO } from "../harness/bodies.js";
import { bodyInTree, digests, treeScripts } from "../harness/pins.js";
import {
  AssemblyError,
  assemble,
  dataOfScript,
  type PieceReader,
  piecesOf,
  SCRIPTS,
} from "../src/scripts/index.js";
import { JOB_CORE, PROTOCOL } from "../src/protocol.js";

const SCRIPTS_DIR = join(REPO, "src", "scripts");
const pieceNames = readdirSync(join(SCRIPTS_DIR, "lib"))
  .filter((f) => f.endsWith(".lua"))
  .map((f) => f.slice(0, -4))
  .sort();
const fromMap =
  (files: Record<string, string>): PieceReader =>
  (path) =>
    files[path];

describe("assembly", () => {
  test("each include line is replaced by its piece, dependencies first, each piece once", () => {
    const read = fromMap({
      "s.lua": '-- s\n--- @include "b"\n--- @include "a"\nreturn b()\n',
      "lib/a.lua": "local function a() return 1 end\n",
      "lib/b.lua": '--- @include "a"\nlocal function b() return a() end\n',
    });
    assert.equal(
      assemble("s", read),
      "-- s\nlocal function a() return 1 end\nlocal function b() return a() end\nreturn b()\n",
    );
    assert.deepEqual(piecesOf("s", read), ["a", "b"]);
  });

  test("a cycle of pieces is refused, naming the chain", () => {
    const read = fromMap({
      "s.lua": '--- @include "a"\n',
      "lib/a.lua": '--- @include "b"\n',
      "lib/b.lua": '--- @include "a"\n',
    });
    assert.throws(
      () => assemble("s", read),
      (err: unknown) =>
        err instanceof AssemblyError && err.message === "s.lua: the pieces include each other: a → b → a",
    );
  });

  test("an unknown piece and a malformed include line are refused", () => {
    assert.throws(
      () => assemble("s", fromMap({ "s.lua": '--- @include "nope"\n' })),
      (err: unknown) =>
        err instanceof AssemblyError && /s\.lua includes nope: no piece lib\/nope\.lua/.test(err.message),
    );
    assert.throws(
      () => assemble("s", fromMap({ "s.lua": "--- @include nope\n" })),
      (err: unknown) =>
        err instanceof AssemblyError &&
        /bad include line "--- @include nope": write --- @include "<piece>"/.test(err.message),
    );
  });

  test("a protocol piece needs the verb's data", () => {
    assert.throws(
      () => assemble("s", fromMap({ "s.lua": '--- @include "protocol/form"\n' })),
      (err: unknown) =>
        err instanceof AssemblyError &&
        /includes protocol\/form, but no verb's protocol data names s/.test(err.message),
    );
  });

  test("every script's body: no include line left, no function defined twice, the form from the data", () => {
    for (const spec of JOB_CORE.filter((s) => s.script)) {
      const body = SCRIPTS.get(spec.verb)!.source;
      assert.ok(!body.includes("--- @include"), spec.script!);
      const defined = [...body.matchAll(/local function (\w+)/g)].map((m) => m[1]);
      assert.equal(new Set(defined).size, defined.length, `${spec.script}: ${defined.join(", ")}`);
      assert.ok(body.includes(`wrong number of keys`), spec.script!);
    }
  });

  test("each value's grammar check is made from the data: its rule is the refusal's text", () => {
    const complete = SCRIPTS.get("COMPLETE")!.source;
    const token = JOB_CORE.find((s) => s.verb === "COMPLETE")!.values.find((v) => v.slot === "token")!;
    const rule = PROTOCOL.grammars[token.grammar!].rule;
    assert.ok(complete.includes(`return refuse('${token.name} must be ${rule}')`), complete);
  });
});

describe("the source tree", () => {
  test("no Lua function is defined in two files; each piece defines one function", () => {
    const where = new Map<string, string[]>();
    const files = [...treeScripts(REPO).map((n) => `${n}.lua`), ...pieceNames.map((n) => `lib/${n}.lua`)];
    for (const file of files) {
      const text = readFileSync(join(SCRIPTS_DIR, file), "utf8");
      const top = [...text.matchAll(/^local function (\w+)/gm)].map((m) => m[1]!);
      if (file.startsWith("lib/"))
        assert.deepEqual(top, [file.slice(4, -4)], `${file} defines its own name, once`);
      for (const name of [...text.matchAll(/local function (\w+)/g)].map((m) => m[1]!)) {
        where.set(name, [...(where.get(name) ?? []), file]);
      }
    }
    const twice = [...where].filter(([, fs]) => fs.length > 1);
    assert.deepEqual(twice, []);
  });
});

describe("pins move with the pieces", () => {
  let copy: string;
  const allDigests = () => new Map(treeScripts(copy).map((n) => [n, digests(bodyInTree(copy, n)).sha256]));

  before(() => {
    copy = mkdtempSync(join(tmpdir(), "emq-pieces-"));
    cpSync(join(REPO, "protocol"), join(copy, "protocol"), { recursive: true });
    cpSync(SCRIPTS_DIR, join(copy, "src", "scripts"), {
      recursive: true,
      filter: (src) => !src.endsWith(".ts"),
    });
  });
  after(() => rmSync(copy, { recursive: true, force: true }));

  test("flow control's release, edited: the digests of the scripts that settle or drop an active job move, no other", () => {
    const before = allDigests();
    const file = join(copy, "src", "scripts", "lib", "release.lua");
    const original = readFileSync(file, "utf8");
    writeFileSync(file, `${original}-- edited\n`);
    try {
      const after = allDigests();
      const moved = [...before.keys()].filter((n) => before.get(n) !== after.get(n));
      // Every script that takes a job out of active releases its group slot: those, and only those.
      assert.deepEqual(moved, [
        "cancel",
        "complete",
        "completen",
        "completenext",
        "fail",
        "failnext",
        "reap",
        "requeue",
        "reschedule",
      ]);
    } finally {
      writeFileSync(file, original);
    }
  });

  test("every piece, edited: exactly the scripts that include it (directly or through a piece) move", () => {
    const read: PieceReader = (path) => readFileSync(join(copy, "src", "scripts", path), "utf8");
    const before = allDigests();
    for (const piece of pieceNames) {
      const file = join(copy, "src", "scripts", "lib", `${piece}.lua`);
      const original = readFileSync(file, "utf8");
      writeFileSync(file, `${original}-- edited\n`);
      try {
        const after = allDigests();
        const moved = [...before.keys()].filter((n) => before.get(n) !== after.get(n));
        const including = treeScripts(copy).filter((n) => piecesOf(n, read, dataOfScript(n)).includes(piece));
        assert.deepEqual(moved, including, piece);
        assert.ok(moved.length > 0, `${piece} is included by some script`);
      } finally {
        writeFileSync(file, original);
      }
    }
  });

  test("a verb's protocol data, edited: only its script's digest moves", () => {
    const before = allDigests();
    const file = join(copy, "protocol", "verbs", "extend.json");
    const original = readFileSync(file, "utf8");
    const spec = JSON.parse(original);
    spec.values[1].name = "lease number";
    writeFileSync(file, JSON.stringify(spec));
    try {
      const after = allDigests();
      const moved = [...before.keys()].filter((n) => before.get(n) !== after.get(n));
      assert.deepEqual(moved, ["extend"]);
      assert.ok(bodyInTree(copy, "extend").toString().includes("refuse('lease number must be"));
    } finally {
      writeFileSync(file, original);
    }
  });
});

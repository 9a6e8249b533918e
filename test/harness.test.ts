/**
 * The differential harness (harness/): a shorter run than `npm run harness` (every listed case,
 * at least 1,000 generated steps, the durability checks), the harness's own tests — deliberate
 * faults on the native side must be caught and named, an edited pinned body must make it refuse
 * — and the pure comparison functions.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  mkdirSync,
  copyFileSync,
  cpSync,
  readdirSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { loadBodies, PINS_FILE, REPO } from "../harness/bodies.js";
import { canon, changes, diffDumps, normalize, tokenizeReply } from "../harness/compare.js";
import type { RawDump, RawValue } from "../harness/dump.js";
import type { Fault } from "../harness/executors.js";
import { faultFailure, withFault } from "./support/harness-fault.js";
import { PinError, pinHead, readPins, verifyPins, writePins } from "../harness/pins.js";
import { parseReply, type Reply, ReplyStream } from "../src/resp.js";
import { JOB_CORE } from "../src/protocol.js";
import { ALL_CASES, runHarness } from "../harness/run.js";
import { applyWrites, predictNative } from "../harness/spec.js";
import { accepts, layoutQueue, queueKey, rowKey, shapeOf, verbOf } from "../harness/verbs.js";
import { WIRE6 } from "./support/module.js";

const SEED = Number(process.env.HARNESS_SEED ?? 20261129);
/** Every job-core verb but RESCHEDULE (native only) has a script twin. */
const SCRIPTS = JOB_CORE.filter((spec) => spec.script !== null).length;
const J1 = "JOB00000000001";
const b = (s: string) => Buffer.from(s, "latin1");

describe("the harness, short run", () => {
  test("every listed case, at least 1,000 generated steps and the durability checks: zero failures", async () => {
    const result = await runHarness({ steps: 1000, seed: SEED });
    assert.equal(result.ok, true, result.report);
    assert.ok(result.tally.generatedSteps >= 1000, `only ${result.tally.generatedSteps} generated steps`);
    assert.equal(result.tally.listedCases, ALL_CASES.length);
    const table = result.tally.table();
    for (const verb of ["ENQUEUE", "CLAIM", "RESCHEDULE", "REQUEUE", "INSTALL"])
      assert.match(table, new RegExp(`\\| ${verb} \\|`));
    assert.match(result.report, /durability: no EMQ\.\* in the AOF \| 1 \| 1 \| 0 \| 0/);
    assert.match(result.report, /durability: restart on the AOF \| 1 \| 1 \| 0 \| 0/);
    assert.match(result.report, /RESULT: zero failures/);
  });
});

/* ------------------------------------------------------------------ deliberate faults */

describe("the harness catches a wrong native reply or write", () => {
  test("a swapped field of the reply (FAIL answers dead for pending), in a listed case and in a generated sequence", async () => {
    const swap = (r: Reply): Reply =>
      r.t === "bulk" && r.v.toString() === "pending" ? { t: "bulk", v: b("dead") } : r;
    const result = await withFault({ verb: "FAIL", reply: swap }, /^FAIL: back to pending/, 3000);
    assert.equal(result.ok, false);
    const row = result.tally.rows.get("FAIL");
    assert.ok(row && row.failed > 0, result.report);
    const failure = result.tally.failures.find((f) => f.verb === "FAIL");
    assert.ok(failure);
    assert.ok(
      failure.problems.some((p) => p === 'reply: script "pending" vs native "dead"'),
      failure.problems.join("\n"),
    );
    assert.match(result.report, /EMQ\.FAIL — FAIL: back to pending/);
    // The generated sequences found it too, and fast-check shrank it to a short sequence naming FAIL.
    assert.equal(result.tally.counterexamples.length > 0, true, result.report);
    assert.match(result.tally.counterexamples[0]!, /Counterexample: \[.*FAIL\(/);
    assert.match(result.tally.counterexamples[0]!, /EMQ\.FAIL differs/);
  });

  test("an extra HSET on the native queue after ENQUEUE", async () => {
    const fault: Fault = {
      verb: "ENQUEUE",
      writes: (side) => [["HSET", rowKey(side.name("A"), J1), "extra", "1"]],
    };
    const { result, failure } = await faultFailure(fault, /^ENQUEUE: a new job$/);
    assert.equal(result.ok, false);
    assert.deepEqual(failure.problems, [`emq:{A}:job:${J1} field "extra": script absent vs native "1"`]);
  });

  test("an extra event entry, and an entry of another time, are caught on the events stream", async () => {
    const events = (side: { name(q: string): string }) => `emq:{${side.name("A")}}:events`;
    const twice: Fault = {
      verb: "COMPLETE",
      writes: (side) => [["XADD", events(side), "*", "event", "completed", "id", J1, "attempt", "1"]],
    };
    const { failure } = await faultFailure(twice, /^COMPLETE: kept in done$/);
    // The extra entry is caught; on a loaded machine its id may also fall a millisecond after the
    // transition's time window, and then that is reported too (and the entry shown by its raw id).
    const [stream, ...rest] = [
      failure.problems.filter((p) => / stream /.test(p)),
      failure.problems.filter((p) => !/ stream /.test(p)),
    ];
    assert.equal(stream.length, 1, failure.problems.join("\n"));
    assert.match(
      stream[0]!,
      /^emq:\{A\}:events stream \(3 vs 4 entries\) differs at entry 3: script "added: 3" vs native "3: (T\d+|\?\d+-\d+) \[.*completed/,
    );
    for (const p of rest.flat())
      assert.match(p, /^native: emq:\{A\}:events: entry id \d+-\d+ is not of a now in \[/);
    const late: Fault = {
      verb: "ENQUEUE",
      writes: (side) => [["XADD", events(side), "99999999999999-0", "event", "x"]],
    };
    const later = await withFault(late, /^ENQUEUE: a new job$/);
    const problems = later.tally.failures.find((f) => f.verb === "ENQUEUE")?.problems.join("\n") ?? "";
    assert.match(problems, /native: emq:\{A\}:events: entry id 99999999999999-0 is not of a now in \[/);
  });

  test("a wake naming the wrong count, and an extra wake, are caught with their payloads", async () => {
    const channel = (side: { name(q: string): string }) => `emq:{${side.name("A")}}:wake`;
    const extra: Fault = { verb: "PROMOTE", writes: (side) => [["SPUBLISH", channel(side), "1"]] };
    const { failure } = await faultFailure(extra, /^PROMOTE: three due ids, one wake naming 3$/);
    assert.deepEqual(failure.problems, ['wake on queue A: script published ["3"], native ["3","1"]']);
  });

  test("over maxmemory: a drain the native side refused is caught (its reply, and the limit's own check)", async () => {
    const oom = "OOM command not allowed when used memory > 'maxmemory'.";
    const refuse = (): Reply => ({ t: "error", v: oom });
    const { failure } = await faultFailure(
      { verb: "COMPLETE", reply: refuse },
      /^COMPLETE write guard: over maxmemory$/,
    );
    assert.deepEqual(failure.problems, [
      `reply: script :1 vs native -${oom}`,
      `over maxmemory: the drain COMPLETE was refused (-${oom})`,
    ]);
  });

  test("a claim that leaves no lease_epoch (D1) is caught", async () => {
    const fault: Fault = {
      verb: "CLAIM",
      writes: (side) => [["HDEL", rowKey(side.name("A"), J1), "lease_epoch"]],
    };
    const { problems } = await faultFailure(fault, /^CLAIM: one job \(window\)$/);
    assert.match(
      problems,
      /native: D1: emq:\{A\}:job:JOB00000000001 was leased by this call but lease_epoch is absent/,
    );
  });

  test("a deadline off by 1 ms in a lease-exact case is caught", async () => {
    const shift = (r: Reply): Reply =>
      r.t === "array" && r.v[3]?.t === "int"
        ? { t: "array", v: [...r.v.slice(0, 3), { t: "int", v: String(Number(r.v[3].v) + 1) }] }
        : r;
    const { failure } = await faultFailure({ verb: "CLAIM", reply: shift }, /^CLAIM: lease-exact$/);
    assert.match(failure.problems.join("\n"), /reply time \d+ is not now\+30000 for now in \[(\d+), \1\]/);
  });

  test("a native refusal that breaks its declaration (D3) is caught", async () => {
    const ok = (r: Reply): Reply => (r.t === "error" ? { t: "int", v: "1" } : r);
    const { failure } = await faultFailure({ verb: "PAUSE", reply: ok }, /^PAUSE layout: empty queue name/);
    assert.match(
      failure.problems[0]!,
      /^D3: native replied :1, the declaration says -ERR EMQ\.PAUSE keys do not match the wire-4 layout$/,
    );
  });

  test("a RESCHEDULE that forgets the state field differs from its script twin", async () => {
    const fault: Fault = {
      verb: "RESCHEDULE",
      writes: (side) => [["HSET", rowKey(side.name("A"), J1), "state", "active"]],
    };
    const { problems } = await faultFailure(fault, /^RESCHEDULE: lease-exact$/);
    assert.match(problems, /job:JOB00000000001 field "state": script "scheduled" vs native "active"/);
  });
});

/* ------------------------------------------------------------------ pins */

describe("pinned bodies", () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, ...args], { stdio: "pipe" })
      .toString()
      .trim();

  before(() => {
    repo = mkdtempSync(join(tmpdir(), "emq-pins-"));
    mkdirSync(join(repo, "src", "scripts", "lib"), { recursive: true });
    for (const dir of [join("src", "scripts"), join("src", "scripts", "lib")]) {
      for (const f of readdirSync(join(REPO, dir)).filter((n) => n.endsWith(".lua"))) {
        copyFileSync(join(REPO, dir, f), join(repo, dir, f));
      }
    }
    // The bodies are assembled: the pieces made from the protocol data read it too.
    cpSync(join(REPO, "protocol"), join(repo, "protocol"), { recursive: true });
    git("init", "-q");
    git("-c", "user.email=h@example.invalid", "-c", "user.name=harness", "add", ".");
    git("-c", "user.email=h@example.invalid", "-c", "user.name=harness", "commit", "-q", "-m", "scripts");
    writePins(join(repo, "pins.json"), pinHead(repo));
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  test("this repository's pins verify against the working tree's scripts", () => {
    const bodies = loadBodies();
    assert.equal(bodies.byVerb.size, SCRIPTS);
    assert.equal(bodies.commit, readPins(PINS_FILE).commit);
  });

  test("pins verify in a fresh repository", () => {
    assert.equal(verifyPins(repo, readPins(join(repo, "pins.json"))).size, SCRIPTS);
  });

  test("one digest changed in the pin file: the harness refuses, naming the script and both digests", async () => {
    const pins = readPins(join(repo, "pins.json"));
    const good = pins.scripts.claim!.sha256;
    const bad = `${good.slice(0, -1)}${good.endsWith("0") ? "1" : "0"}`;
    pins.scripts.claim!.sha256 = bad;
    const file = join(repo, "bad-pins.json");
    writePins(file, pins);
    await assert.rejects(runHarness({ steps: 0, seed: 1, pins: { repo, file } }), (err: unknown) => {
      assert.ok(err instanceof PinError);
      assert.match(err.message, /^refusing to measure: src\/scripts\/claim\.lua at pinned commit/);
      assert.ok(err.message.includes(`sha256 expected ${bad} got ${good}`), err.message);
      assert.ok(
        err.message.includes(`sha1 expected ${pins.scripts.claim!.sha1} got ${pins.scripts.claim!.sha1}`),
      );
      return true;
    });
  });

  test("one byte of a script edited without re-pinning: refused (working tree, then the committed body)", () => {
    const file = join(repo, "src", "scripts", "fail.lua");
    const original = readFileSync(file);
    const edited = Buffer.from(original);
    edited[edited.length - 2] = edited[edited.length - 2]! ^ 0x01;
    writeFileSync(file, edited);
    const pins = readPins(join(repo, "pins.json"));
    assert.throws(
      () => verifyPins(repo, pins),
      /src\/scripts\/fail\.lua in the working tree differs from its pinned body: sha1 pinned [0-9a-f]{40} tree [0-9a-f]{40}/,
    );
    assert.throws(
      () => pinHead(repo),
      /fail\.lua has changes HEAD does not contain \(the script, a piece it includes or its protocol data\): commit them first/,
    );
    git(
      "-c",
      "user.email=h@example.invalid",
      "-c",
      "user.name=harness",
      "commit",
      "-q",
      "-am",
      "edit fail.lua",
    );
    // The pins still name the old commit: its body verifies, but it is not the tree's any more.
    assert.throws(() => verifyPins(repo, pins), /fail\.lua in the working tree differs from its pinned body/);
    // Pinning the new commit without re-digesting: both digests of fail.lua differ.
    const stale = { ...pins, commit: git("rev-parse", "HEAD") };
    assert.throws(
      () => verifyPins(repo, stale),
      /refusing to measure: src\/scripts\/fail\.lua at pinned commit [0-9a-f]{12} does not match its pin: sha1 expected [0-9a-f]{40} got [0-9a-f]{40}; sha256 expected/,
    );
    // Re-pinning (the documented command's function) accepts it again.
    writePins(join(repo, "pins.json"), pinHead(repo));
    assert.equal(verifyPins(repo, readPins(join(repo, "pins.json"))).size, SCRIPTS);
  });

  test("a script without a pin is refused", () => {
    writeFileSync(join(repo, "src", "scripts", "extra.lua"), "return 1\n");
    try {
      assert.throws(
        () => verifyPins(repo, readPins(join(repo, "pins.json"))),
        /script\(s\) without a pin: src\/scripts\/extra\.lua/,
      );
    } finally {
      rmSync(join(repo, "src", "scripts", "extra.lua"));
    }
  });
});

/* ------------------------------------------------------------------ pure pieces */

describe("comparison functions", () => {
  const queues = [{ physical: "h1As", logical: "A" }];
  const zset = (members: [string, string][]): RawValue => ({
    type: "zset",
    members: members.map(([m, s]): [Buffer, string] => [b(m), s]),
  });
  const hash = (fields: [string, string][]): RawValue => ({
    type: "hash",
    fields: fields.map(([f, v]): [Buffer, Buffer] => [b(f), b(v)]),
  });

  test("RESP replies keep their types", () => {
    const parse = (s: string) => parseReply(b(s), 0)?.[0];
    assert.deepEqual(parse("+OK\r\n"), { t: "status", v: "OK" });
    assert.deepEqual(parse(":12\r\n"), { t: "int", v: "12" });
    assert.deepEqual(parse("$-1\r\n"), { t: "nil" });
    assert.deepEqual(parse("*-1\r\n"), { t: "nilarray" });
    assert.equal(parse("$5\r\nab"), undefined);
    assert.equal(canon(parse("*3\r\n$2\r\na\0\r\n-ERR x\r\n*0\r\n")!), '["a\\u0000", -ERR x, []]');
    const stream = new ReplyStream();
    assert.deepEqual(stream.push(b("$3\r\nab")), []);
    assert.deepEqual(stream.push(b("c\r\n:1\r\n")), [
      { t: "bulk", v: b("abc") },
      { t: "int", v: "1" },
    ]);
  });

  test("time scores: a token when now + offset is in the window, kept when unchanged, reported otherwise", () => {
    const raw: RawDump = new Map([["emq:{h1As}:active", zset([[J1, "1000100"]])]]);
    const first = normalize(raw, {
      queues,
      step: 3,
      window: { lo: 999_999, hi: 1_000_001 },
      offsets: { active: 100 },
    });
    assert.deepEqual(first.issues, []);
    assert.deepEqual(first.norm.get("emq:{A}:active")?.entries, [[J1, "T3+100"]]);
    const again = normalize(raw, {
      queues,
      step: 4,
      prev: { raw, norm: first.norm },
      window: { lo: 5, hi: 6 },
      offsets: {},
    });
    assert.deepEqual(again.norm.get("emq:{A}:active")?.entries, [[J1, "T3+100"]]);
    const off = normalize(new Map([["emq:{h1As}:active", zset([[J1, "1000102"]])]]), {
      queues,
      step: 5,
      window: { lo: 999_999, hi: 1_000_001 },
      offsets: { active: 100 },
    });
    assert.match(off.issues[0]!, /time score 1000102 is not now\+100 for now in \[999999, 1000001\]/);
    const reply = tokenizeReply(
      {
        t: "array",
        v: [
          { t: "int", v: "1" },
          { t: "int", v: "1000100" },
        ],
      },
      { index: 1, offset: 100 },
      { lo: 1_000_000, hi: 1_000_000 },
      7,
      [],
    );
    assert.equal(canon(reply), "[:1, :T7+100]");
  });

  test("lease_epoch: masked when it is the run_id, reported when wrong or missing on a leased row", () => {
    const row = `emq:{h1As}:job:${J1}`;
    const good = normalize(
      new Map([
        [
          row,
          hash([
            ["state", "active"],
            ["lease_epoch", "abc"],
          ]),
        ],
      ]),
      {
        queues,
        step: 1,
        epoch: { runId: "abc", leasedRows: [row] },
      },
    );
    assert.deepEqual(good.issues, []);
    assert.deepEqual(good.norm.get(`emq:{A}:job:${J1}`)?.entries, [["state", "active"]]);
    const bad = normalize(new Map([[row, hash([["lease_epoch", "zzz"]])]]), {
      queues,
      step: 1,
      epoch: { runId: "abc", leasedRows: [row] },
    });
    assert.equal(bad.issues.length, 2);
  });

  test("dump differences name the key, the field and both sides", () => {
    const a = normalize(new Map([["emq:{h1As}:job:X", hash([["state", "pending"]])]]), {
      queues,
      step: 1,
    }).norm;
    const other = [{ physical: "h1An", logical: "A" }];
    const native: RawDump = new Map([
      ["emq:{h1An}:job:X", hash([["state", "active"]])],
      ["emq:{h1An}:meta", hash([])],
    ]);
    const c = normalize(native, { queues: other, step: 1 }).norm;
    assert.deepEqual(diffDumps(a, c), [
      'emq:{A}:job:X field "state": script "pending" vs native "active"',
      "emq:{A}:meta: only on the native side (hash)",
    ]);
    assert.deepEqual(changes(new Map(), new Map()), []);
  });

  test("shape, layout and value grammars, from the protocol", () => {
    const claim = verbOf("CLAIM");
    const keys = [queueKey("q", "pending"), queueKey("q", "active"), queueKey("q", "base")];
    assert.equal(shapeOf(claim, [b("x")]).kind, "eval-refuses");
    assert.equal(shapeOf(claim, [b("03"), ...keys, b("5")]).kind, "eval-refuses");
    assert.equal(shapeOf(claim, [b("2"), ...keys, b("5")]).kind, "wrong-keys");
    assert.equal(shapeOf(claim, [b("3"), ...keys]).kind, "wrong-values");
    assert.equal(layoutQueue(claim, keys, [b("5")])?.toString(), "q");
    assert.equal(
      layoutQueue(claim, [queueKey("", "pending"), queueKey("", "active"), queueKey("", "base")], [b("5")]),
      null,
    );
    assert.equal(layoutQueue(claim, [keys[0]!, queueKey("r", "active"), keys[2]!], [b("5")]), null);
    assert.equal(layoutQueue(verbOf("ENQUEUE"), [rowKey("q", "JOB2"), keys[0]!], [b("JOB1"), b("p")]), null);
    assert.equal(accepts("priority", "-0"), false);
    assert.equal(accepts("priority", "-999999999999999"), true);
    assert.equal(accepts("ms", "1000000000000000"), false);
    assert.equal(accepts("limit", "10001"), false);
  });

  test("the RESCHEDULE executable check: to schedule at now + delay, wake 0", () => {
    const state: RawDump = new Map([
      ["emq:{q}:active", zset([[J1, "99"]])],
      [
        `emq:{q}:job:${J1}`,
        hash([
          ["state", "active"],
          ["attempts", "2"],
          ["priority", "-7"],
        ]),
      ],
    ]);
    const tail = [
      b("3"),
      queueKey("q", "active"),
      queueKey("q", "schedule"),
      queueKey("q", "base"),
      b(J1),
      b("2"),
      b("500"),
    ];
    const brand: RawValue = { type: "string", value: b(WIRE6) };
    const p = predictNative("RESCHEDULE", tail, state, brand, 5);
    assert.equal(canon(p.reply), ":505");
    assert.deepEqual(p.wakes, ["0"]);
    const after = applyWrites(state, p.writes);
    assert.equal(after.has("emq:{q}:active"), false);
    assert.deepEqual(after.get("emq:{q}:schedule"), zset([[J1, "505"]]));
    const stale = predictNative("RESCHEDULE", [...tail.slice(0, -2), b("1"), b("500")], state, brand, 5);
    assert.equal(canon(stale.reply), "-ERR EMQ.RESCHEDULE stale lease token");
    const unbranded = predictNative("RESCHEDULE", tail, state, undefined, 5);
    assert.equal(canon(unbranded.reply), `-EMQWIRE expected ${WIRE6} found (nil)`);
  });
});

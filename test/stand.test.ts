/**
 * The stand: one enqueue + claim through a wire-4 connector (node A, scripts) and a wire-6
 * connector (node B, module). Run in-process through runStand and once as the command.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { before, describe, test } from "node:test";
import type { RawDump } from "../harness/dump.js";
import { verbOf } from "../harness/verbs.js";
import { type KeyEntry, runStand, type StandResult, VERDICT_OK } from "../tools/stand.js";
import { runClusterStand } from "../tools/stand-cluster.js";
import { compareKeyspaces, compareMonitor } from "../tools/stand-compare.js";
import { queueKey, scriptFor } from "../src/protocol.js";
import { WIRE4, WIRE6 } from "./support/module.js";

const root = fileURLToPath(new URL("..", import.meta.url));

function keys(ks: KeyEntry[]): string[] {
  return ks.map((e) => `${e.key} ${e.type}`);
}

/** A hash's fields, a zset's members with their scores (in member order). */
const entriesOf = (ks: KeyEntry[], key: string) => ks.find((e) => e.key === key)!.entries;
const fieldsOf = (ks: KeyEntry[], key: string): Record<string, string> =>
  Object.fromEntries(entriesOf(ks, key));

describe("the stand (in-process)", () => {
  let result: StandResult;
  let printed: string[];
  before(async () => {
    printed = [];
    result = await runStand({ json: true, out: (line) => printed.push(line) });
  });

  test("prints the result as JSON and passes", () => {
    assert.equal(printed.length, 1);
    const parsed = JSON.parse(printed[0]!) as StandResult;
    assert.equal(parsed.verdict, VERDICT_OK);
    assert.deepEqual(
      parsed.steps.map((s) => s.keyspace),
      result.steps.map((s) => s.keyspace),
    );
    assert.deepEqual(result.unexpected, []);
    assert.equal(result.ok, true);
    assert.equal(result.verdict, VERDICT_OK);
  });

  test("node A carries the scripts' brand, node B the module's", () => {
    assert.equal(result.nodes.a.brand, WIRE4);
    assert.equal(result.nodes.b.brand, WIRE6);
    assert.match(result.nodes.b.runId, /^[0-9a-f]{40}$/);
  });

  test("both nodes hold the same keys after each step", () => {
    const row = queueKey(result.queue, "job:") + result.id;
    const [enq, clm] = result.steps;
    // The dump reads hashes, sorted sets and strings first, then the other types (the stream).
    const events = `${queueKey(result.queue, "events")} stream`;
    const pending = `${queueKey(result.queue, "pending")} zset`;
    assert.deepEqual(keys(enq!.keyspace.a), [`${row} hash`, pending, events]);
    assert.deepEqual(keys(enq!.keyspace.b), keys(enq!.keyspace.a));
    assert.deepEqual(keys(clm!.keyspace.a), [
      `${queueKey(result.queue, "active")} zset`,
      `${row} hash`,
      events,
    ]);
    assert.deepEqual(keys(clm!.keyspace.b), keys(clm!.keyspace.a));
  });

  test("row fields are equal except lease_epoch, present only on B and equal to B's run_id, and processed_on, each node's claim time", () => {
    const row = queueKey(result.queue, "job:") + result.id;
    for (const step of result.steps) {
      const a = fieldsOf(step.keyspace.a, row);
      const b = fieldsOf(step.keyspace.b, row);
      assert.equal(a.lease_epoch, undefined, "the script writes no lease_epoch");
      if (step.name === "claim") {
        assert.equal(b.lease_epoch, result.nodes.b.runId);
        delete b.lease_epoch;
        // processed_on: the claim's now on its own node, its deadline less the lease.
        for (const [fields, side] of [
          [a, "a"],
          [b, "b"],
        ] as const) {
          const deadline = (step.reply[side] as { deadline: number }).deadline;
          assert.equal(fields.processed_on, String(deadline - result.leaseMs));
          delete fields.processed_on;
        }
        assert.equal(a.state, "active");
        assert.equal(a.attempts, "1");
      } else {
        assert.equal(b.lease_epoch, undefined);
        assert.equal(b.processed_on, undefined);
        assert.equal(a.state, "pending");
      }
      assert.deepEqual(b, a);
      assert.equal(a.payload, result.payload);
    }
  });

  test("the lease deadlines differ only by when each claim ran", () => {
    const active = queueKey(result.queue, "active");
    const claimStep = result.steps[1]!;
    const sa = entriesOf(claimStep.keyspace.a, active);
    const sb = entriesOf(claimStep.keyspace.b, active);
    assert.deepEqual(
      sa.map(([member]) => member),
      sb.map(([member]) => member),
    );
    const replyA = claimStep.reply.a as { deadline: number };
    const replyB = claimStep.reply.b as { deadline: number };
    assert.equal(Number(sa[0]![1]), replyA.deadline);
    assert.equal(Number(sb[0]![1]), replyB.deadline);
    assert.ok(Math.abs(Number(sb[0]![1]) - Number(sa[0]![1])) < 5000, "both claims ran within seconds");
    const row = claimStep.rows.find((r) => r.key === active)!;
    assert.equal(row.mark, replyA.deadline === replyB.deadline ? "equal" : "declared");
    const replyRow = claimStep.rows.find((r) => r.what === "reply deadline")!;
    assert.equal(replyRow.mark, row.mark);
  });

  test("MONITOR: EVALSHA on A, EMQ.ENQUEUE / EMQ.CLAIM on B, with the same tail", () => {
    const [enq, clm] = result.steps;
    const lower = (lines: string[][]) => lines.map((l) => [l[0]!.toLowerCase(), ...l.slice(1)]);

    const ea = lower(enq!.monitor.a.transition);
    const eb = lower(enq!.monitor.b.transition);
    assert.equal(ea.length, 1);
    assert.equal(eb.length, 1);
    assert.deepEqual(ea[0]!.slice(0, 2), ["evalsha", scriptFor("ENQUEUE").sha1]);
    assert.equal(eb[0]![0], "emq.enqueue");
    assert.deepEqual(ea[0]!.slice(2), eb[0]!.slice(1));
    assert.deepEqual(eb[0]!.slice(1, 4), [
      "2",
      queueKey(result.queue, "job:") + result.id,
      queueKey(result.queue, "pending"),
    ]);

    const ca = lower(clm!.monitor.a.transition);
    const cb = lower(clm!.monitor.b.transition);
    assert.equal(ca.length, 2);
    assert.equal(cb.length, 2);
    const pauseRead = ["hget", queueKey(result.queue, "meta"), "paused"];
    assert.deepEqual(ca[0], pauseRead);
    assert.deepEqual(cb[0], pauseRead);
    assert.deepEqual(ca[1]!.slice(0, 2), ["evalsha", scriptFor("CLAIM").sha1]);
    assert.equal(cb[1]![0], "emq.claim");
    assert.deepEqual(ca[1]!.slice(2), cb[1]!.slice(1));
    assert.deepEqual(cb[1]!.slice(1), [
      "3",
      queueKey(result.queue, "pending"),
      queueKey(result.queue, "active"),
      queueKey(result.queue, ""),
      String(result.leaseMs),
    ]);

    // wire 6 sends no Lua: nothing but the verbs (and the host step) reached node B.
    for (const step of result.steps) {
      assert.ok(step.monitor.b.sent.every((l) => !/^(evalsha|eval|script)$/i.test(l[0]!)));
    }
  });
});

describe("the stand (the command)", () => {
  test("npx tsx tools/stand.ts exits 0 with the verdict line", async () => {
    const child = spawn("npx", ["tsx", "tools/stand.ts"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    assert.equal(code, 0, `stand exited ${code}\n${stdout}\n${stderr}`);
    const lines = stdout.trimEnd().split("\n");
    assert.equal(lines[lines.length - 1], VERDICT_OK);
    assert.ok(stdout.includes("≠ lease_epoch (declared: native claim adds run_id"), stdout);
  });
});

describe("the stand's comparison", () => {
  const queue = "quotes";
  const id = "JOB0KHTOWnGLuC";
  const row = queueKey(queue, "job:") + id;
  const active = queueKey(queue, "active");
  const runIdB = "a".repeat(40);
  const ctx = {
    queue,
    leased: id,
    runIdB,
    windows: { a: { lo: 1000, hi: 1001 }, b: { lo: 1002, hi: 1003 } },
    offsets: { active: 30_000 },
  };
  const b = (s: string) => Buffer.from(s, "latin1");
  const node = (hash: Record<string, string>, score: number): RawDump =>
    new Map([
      [active, { type: "zset", members: [[b(id), String(score)]] }],
      [row, { type: "hash", fields: Object.entries(hash).map(([f, v]): [Buffer, Buffer] => [b(f), b(v)]) }],
    ]);
  const claimed = { state: "active", attempts: "1", payload: "p" };
  /** What each unexpected row names: the key and field, or (for a finding) its text. */
  const unexpected = (a: RawDump, bb: RawDump) =>
    compareKeyspaces(a, bb, ctx)
      .filter((r) => r.mark === "unexpected")
      .map((r) => (r.what === "keyspace" ? r.note : r.what));

  test("the declared differences pass: lease_epoch = B's run_id, deadlines and processed_on within their windows", () => {
    const rows = compareKeyspaces(
      node({ ...claimed, processed_on: "1000" }, 31_000),
      node({ ...claimed, lease_epoch: runIdB, processed_on: "1002" }, 31_002),
      ctx,
    );
    assert.deepEqual(
      rows.map((r) => [r.what, r.mark]),
      [
        [`${active} ${id}`, "declared"],
        [`${row} attempts`, "equal"],
        [`${row} lease_epoch`, "declared"],
        [`${row} payload`, "equal"],
        [`${row} processed_on`, "declared"],
        [`${row} state`, "equal"],
      ],
    );
    const late = unexpected(
      node({ ...claimed, processed_on: "1000" }, 31_000),
      node({ ...claimed, lease_epoch: runIdB, processed_on: "1004" }, 31_002),
    );
    assert.ok(
      late.some((f) => /processed_on "1004" is not a now in \[1002, 1003\]/.test(f)),
      late.join("\n"),
    );
  });

  test("anything else is unexpected", () => {
    const good = node({ ...claimed, lease_epoch: runIdB }, 31_002);
    const onlyEpoch = (found: string[]) => {
      assert.ok(found.length > 0);
      for (const f of found) assert.ok(f.includes(row) && f.includes("lease_epoch"), f);
    };
    onlyEpoch(unexpected(node({ ...claimed, lease_epoch: runIdB }, 31_000), good)); // on A too
    onlyEpoch(unexpected(node(claimed, 31_000), node({ ...claimed, lease_epoch: "other" }, 31_002)));
    onlyEpoch(unexpected(node(claimed, 31_000), node(claimed, 31_002))); // absent on B
    assert.deepEqual(unexpected(node({ ...claimed, attempts: "2" }, 31_000), good), [`${row} attempts`]);
    const late = unexpected(node(claimed, 31_000), node({ ...claimed, lease_epoch: runIdB }, 40_000));
    assert.equal(late[0], `${active} ${id}`);
    assert.ok(late.length === 2 && late[1]!.includes(active) && late[1]!.includes("40000"), late.join("; "));
    const extra: RawDump = new Map([...good, [queueKey(queue, "pending"), { type: "zset", members: [] }]]);
    assert.deepEqual(unexpected(node(claimed, 31_000), extra), [`${queueKey(queue, "pending")}`]);
  });

  test("MONITOR lines must keep the tail, and the tail must be the verb's form", () => {
    const claimVerb = verbOf("CLAIM");
    const pause = ["hget", queueKey(queue, "meta"), "paused"];
    const tail = ["3", queueKey(queue, "pending"), active, queueKey(queue, ""), "30000"];
    const capture = (transition: string[][]) => ({
      sent: transition,
      transition,
      reloaded: false,
    });
    const marks = (a: string[][], bb: string[][]) =>
      compareMonitor(claimVerb, capture(a), capture(bb), queue).map((r) => r.mark);
    const sha = scriptFor("CLAIM").sha1;
    assert.deepEqual(marks([pause, ["evalsha", sha, ...tail]], [pause, ["emq.claim", ...tail]]), [
      "equal",
      "equal",
    ]);
    const moved = [...tail.slice(0, 4), "30001"];
    assert.deepEqual(marks([pause, ["evalsha", sha, ...tail]], [pause, ["emq.claim", ...moved]]), [
      "equal",
      "unexpected",
    ]);
    const swapped = ["3", active, queueKey(queue, "pending"), queueKey(queue, ""), "30000"];
    assert.deepEqual(marks([pause, ["evalsha", sha, ...swapped]], [pause, ["emq.claim", ...swapped]]), [
      "equal",
      "unexpected",
    ]);
    assert.deepEqual(marks([pause, ["evalsha", "0".repeat(40), ...tail]], [pause, ["emq.claim", ...tail]]), [
      "equal",
      "unexpected",
    ]);
  });
});

describe("the stand on a cluster (npm run stand -- --cluster)", () => {
  test("on 3 plain primaries (wire 4) and 3 module primaries (wire 6), every line of the enqueue + claim reaches the owner of the queue's slot, none another primary", async () => {
    const printed: string[] = [];
    assert.equal(await runClusterStand((line) => printed.push(line)), true, printed.join("\n"));
    const text = printed.join("\n");
    assert.match(
      text,
      /── wire 4[\s\S]*owns the queue's slot[\s\S]*\n {4}evalsha [0-9a-f]{8}… 2 emq:\{quotes\}:job:/,
    );
    assert.match(
      text,
      /── wire 6[\s\S]*owns the queue's slot\n {4}EMQ\.ENQUEUE 2 [\s\S]*\n {4}EMQ\.CLAIM 3 /,
    );
    assert.equal(
      printed.filter((l) => l === "    —").length,
      4,
      "two other primaries per cluster got nothing",
    );
  });
});

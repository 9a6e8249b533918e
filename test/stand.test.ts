/**
 * The stand: one enqueue + claim through a wire-4 connector (node A, scripts) and a wire-6
 * connector (node B, module). Run in-process through runStand and once as the command.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { before, describe, test } from "node:test";
import {
  compareKeyspaces,
  compareMonitor,
  type Keyspace,
  runStand,
  type StandResult,
  VERDICT_OK,
} from "../tools/stand.js";
import { queueKey, scriptFor } from "../src/protocol.js";

const root = fileURLToPath(new URL("..", import.meta.url));

function keys(ks: Keyspace): string[] {
  return ks.map((e) => `${e.key} ${e.type}`);
}

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
    assert.deepEqual(parsed.keyspaces, result.keyspaces);
    assert.deepEqual(result.unexpected, []);
    assert.equal(result.ok, true);
    assert.equal(result.verdict, VERDICT_OK);
  });

  test("node A carries the scripts' brand, node B the module's", () => {
    assert.equal(result.nodes.a.brand, "echomq:4.0.0");
    assert.equal(result.nodes.b.brand, "echomq:6.0.0");
    assert.match(result.nodes.b.runId, /^[0-9a-f]{40}$/);
  });

  test("both nodes hold the same keys after each step", () => {
    const row = queueKey(result.queue, "job:") + result.id;
    const [enq, clm] = result.steps;
    assert.deepEqual(keys(enq!.keyspace.a), [`${row} hash`, `${queueKey(result.queue, "pending")} zset`]);
    assert.deepEqual(keys(enq!.keyspace.b), keys(enq!.keyspace.a));
    assert.deepEqual(keys(clm!.keyspace.a), [`${queueKey(result.queue, "active")} zset`, `${row} hash`]);
    assert.deepEqual(keys(clm!.keyspace.b), keys(clm!.keyspace.a));
  });

  test("row fields are equal except lease_epoch, present only on B and equal to B's run_id", () => {
    const row = queueKey(result.queue, "job:") + result.id;
    for (const step of result.steps) {
      const a = step.keyspace.a.find((e) => e.key === row)!.hash!;
      const b = { ...step.keyspace.b.find((e) => e.key === row)!.hash! };
      assert.equal(a.lease_epoch, undefined, "the script writes no lease_epoch");
      if (step.name === "claim") {
        assert.equal(b.lease_epoch, result.nodes.b.runId);
        delete b.lease_epoch;
        assert.equal(a.state, "active");
        assert.equal(a.attempts, "1");
      } else {
        assert.equal(b.lease_epoch, undefined);
        assert.equal(a.state, "pending");
      }
      assert.deepEqual(b, a);
      assert.equal(a.payload, result.payload);
    }
  });

  test("the lease deadlines differ only by when each claim ran", () => {
    const active = queueKey(result.queue, "active");
    const claimStep = result.steps[1]!;
    const sa = claimStep.keyspace.a.find((e) => e.key === active)!.zset!;
    const sb = claimStep.keyspace.b.find((e) => e.key === active)!.zset!;
    assert.deepEqual(
      sa.map((m) => m.member),
      sb.map((m) => m.member),
    );
    const replyA = claimStep.reply.a as { deadline: number };
    const replyB = claimStep.reply.b as { deadline: number };
    assert.equal(sa[0]!.score, replyA.deadline);
    assert.equal(sb[0]!.score, replyB.deadline);
    assert.ok(Math.abs(sb[0]!.score - sa[0]!.score) < 5000, "both claims ran within seconds");
    const row = claimStep.rows.find((r) => r.key === active)!;
    assert.equal(row.mark, "expected");
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
  const deadlines = {
    reply: { a: 31_000, b: 31_002 },
    window: { a: [1000, 1001], b: [1002, 1003] },
  } as const;
  const ctx = { queue, leased: id, runIdB, deadlines: structuredClone(deadlines) as never, lease: 30_000 };
  const node = (hash: Record<string, string>, score: number): Keyspace => [
    { key: active, type: "zset", zset: [{ member: id, score }] },
    { key: row, type: "hash", hash },
  ];
  const claimed = { state: "active", attempts: "1", payload: "p" };
  const unexpected = (a: Keyspace, b: Keyspace) =>
    compareKeyspaces(a, b, ctx)
      .filter((r) => r.mark === "unexpected")
      .map((r) => r.what);

  test("the declared differences pass: lease_epoch = B's run_id, deadlines within their windows", () => {
    const rows = compareKeyspaces(
      node(claimed, 31_000),
      node({ ...claimed, lease_epoch: runIdB }, 31_002),
      ctx,
    );
    assert.deepEqual(
      rows.map((r) => [r.what, r.mark]),
      [
        [`${active} ${id}`, "expected"],
        [`${row} attempts`, "equal"],
        [`${row} lease_epoch`, "expected"],
        [`${row} payload`, "equal"],
        [`${row} state`, "equal"],
      ],
    );
  });

  test("anything else is unexpected", () => {
    const b = node({ ...claimed, lease_epoch: runIdB }, 31_002);
    assert.deepEqual(unexpected(node({ ...claimed, lease_epoch: runIdB }, 31_000), b), [
      `${row} lease_epoch`,
    ]);
    assert.deepEqual(unexpected(node(claimed, 31_000), node({ ...claimed, lease_epoch: "other" }, 31_002)), [
      `${row} lease_epoch`,
    ]);
    assert.deepEqual(unexpected(node(claimed, 31_000), node(claimed, 31_002)), [`${row} lease_epoch`]);
    assert.deepEqual(unexpected(node({ ...claimed, attempts: "2" }, 31_000), b), [`${row} attempts`]);
    assert.deepEqual(unexpected(node(claimed, 31_000), node({ ...claimed, lease_epoch: runIdB }, 40_000)), [
      `${active} ${id}`,
    ]);
    const extra: Keyspace = [...b, { key: queueKey(queue, "pending"), type: "zset", zset: [] }];
    assert.deepEqual(unexpected(node(claimed, 31_000), extra), [`${queueKey(queue, "pending")}`]);
  });

  test("MONITOR lines must keep the tail", () => {
    const pause = ["hget", queueKey(queue, "meta"), "paused"];
    const tail = ["3", queueKey(queue, "pending"), active, queueKey(queue, ""), "30000"];
    const capture = (transition: string[][]) => ({
      sent: transition,
      transition,
      reloaded: false,
      inner: [],
    });
    const a = capture([pause, ["evalsha", scriptFor("CLAIM").sha1, ...tail]]);
    const same = compareMonitor("claim", a, capture([pause, ["emq.claim", ...tail]]), queue);
    assert.deepEqual(
      same.map((r) => r.mark),
      ["equal", "equal"],
    );
    const moved = compareMonitor(
      "claim",
      a,
      capture([pause, ["emq.claim", ...tail.slice(0, 4), "30001"]]),
      queue,
    );
    assert.deepEqual(
      moved.map((r) => r.mark),
      ["equal", "unexpected"],
    );
  });
});

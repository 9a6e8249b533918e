/**
 * The size bounds (docs/protocol.md, "Value grammars"), on both wires: a payload, a result, a
 * progress value, a log line and an error text over its bound is refused with `TooLargeError`
 * naming the value, its size and the bound, before anything is sent, and nothing is written; the
 * server refuses it too (a raw call), with the same text on both executors and the same typed
 * error; a value at its bound is kept. A worker's oversized result fails the attempt; an oversized
 * error text is cut to fit, so the failure is kept.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { FlowProducer, Queue, TooLargeError, Worker } from "../src/index.js";
import { PROTOCOL, queueKey, scriptFor, add, progress, log, fail, claim, complete } from "../src/protocol.js";
import { until } from "./support/until.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

/** The bound of a size grammar, as the protocol data declares it. */
function max(grammar: "payload" | "result" | "progress" | "line" | "error"): number {
  const bound = PROTOCOL.grammars[grammar].max_bytes;
  assert.ok(bound !== undefined && bound > 0, `${grammar} has a bound`);
  return bound;
}

/** Rejects with `TooLargeError` for `argument`, `bytes` over `bound`, in its message. */
async function tooLarge(run: () => Promise<unknown>, argument: string, bytes: number, bound: number) {
  await assert.rejects(run(), (e: unknown) => {
    assert.ok(e instanceof TooLargeError, `expected TooLargeError, got ${String(e)}`);
    assert.equal(e.argument, argument);
    assert.equal(e.bytes, bytes);
    assert.equal(e.maxBytes, bound);
    assert.match(
      e.message,
      new RegExp(
        `^invalid ${argument.replace(/[[\]]/g, "\\$&")}: ${bytes} bytes, over its bound of ${bound} bytes`,
      ),
    );
    return true;
  });
}

forEachWire("size bounds", (ctx) => {
  test("each value over its bound is refused on the host with TooLargeError, nothing written", async () => {
    const { conn, server } = ctx();
    const q = "sb1";
    const queue = new Queue(q, conn);
    const { id } = await queue.add("p");
    const job = await claim(conn, q, 30_000);
    assert.equal(job?.id, id);
    const before = await dumpQueue(server, q, { events: true });

    const over = max("payload") + 1;
    await tooLarge(() => queue.add("x".repeat(over)), "payload", over, max("payload"));
    await tooLarge(() => queue.add(Buffer.alloc(over)), "payload", over, max("payload"));
    // Multi-byte characters count as their UTF-8 bytes.
    const wide = "é".repeat(max("payload") / 2) + "x";
    await tooLarge(() => queue.add(wide), "payload", over, max("payload"));
    await tooLarge(
      () => queue.addBulk([{ payload: "x".repeat(over) }]),
      "jobs[0].payload",
      over,
      max("payload"),
    );
    await tooLarge(
      () =>
        new FlowProducer(conn).add({
          queue: q,
          payload: Buffer.alloc(over),
          children: [{ queue: q, payload: "c" }],
        }),
      "flow.payload",
      over,
      max("payload"),
    );
    await tooLarge(
      () => queue.schedule("nightly", { everyMs: 60_000, payload: Buffer.alloc(over) }),
      "payload",
      over,
      max("payload"),
    );
    const result = max("result") + 1;
    await tooLarge(() => complete(conn, q, id, 1, Buffer.alloc(result), 10), "result", result, max("result"));
    const error = max("error") + 1;
    const failing = { backoffMs: 0, maxAttempts: 5, keep: 10 };
    await tooLarge(() => fail(conn, q, id, 1, "e".repeat(error), failing), "error", error, max("error"));
    const value = max("progress") + 1;
    await tooLarge(() => progress(conn, q, id, 1, Buffer.alloc(value)), "value", value, max("progress"));
    const line = max("line") + 1;
    await tooLarge(() => log(conn, q, id, 1, "l".repeat(line)), "line", line, max("line"));

    assert.deepEqual(await dumpQueue(server, q, { events: true }), before);
  });

  test("the server refuses each value over its bound: the same text on both executors, typed", async () => {
    const { conn, server } = ctx();
    const q = "sb2";
    const { id } = await add(conn, q, "p");
    const token = String((await claim(conn, q, 30_000))!.attempts);
    const parent = "JOB0000000000P";
    const k = (t: Parameters<typeof queueKey>[1]) => queueKey(q, t);
    const row = `${k("")}job:`;
    const big = (n: number) => "b".repeat(n);
    const cases: [string, string[], (v: string) => string[], string, number][] = [
      [
        "ENQUEUE",
        [`${row}JOB0000000000E`, k("pending")],
        (v) => ["JOB0000000000E", v],
        "payload",
        max("payload"),
      ],
      [
        "ADD",
        [`${row}JOB0000000000A`, k("pending"), k("schedule")],
        (v) => ["JOB0000000000A", v, "0", "0", "0", "", "", "", "0", "0", "", "", ""],
        "payload",
        max("payload"),
      ],
      [
        "PARENT",
        [`${row}${parent}`, k("waiting")],
        (v) => [parent, v, "0", "0", "2", "fail", "", "", ""],
        "payload",
        max("payload"),
      ],
      [
        "SCHEDULE",
        [k("repeats"), k("")],
        (v) => ["n", "{}", "1000", "0", "0", v, "0", "0", "0", "", ""],
        "payload",
        max("payload"),
      ],
      ["COMPLETE", [k("active"), k("done"), k("")], (v) => [id, token, v, "10"], "result", max("result")],
      [
        "SETTLE",
        [k("waiting"), k("pending"), k("dead"), k("")],
        (v) => [parent, "c", "JOB0000000000C", "completed", v],
        "value",
        max("result"),
      ],
      [
        "FAIL",
        [k("active"), k("pending"), k("schedule"), k("dead"), k("")],
        (v) => [id, token, v, "0", "5", "10", ""],
        "error",
        max("error"),
      ],
      ["PROGRESS", [k("active"), k("")], (v) => [id, token, v], "progress", max("progress")],
      ["LOG", [k("active"), k("")], (v) => [id, token, v], "line", max("line")],
    ];
    const before = await dumpQueue(server, q, { events: true });
    for (const [verb, keys, values, name, bound] of cases) {
      await assert.rejects(conn.eval(scriptFor(verb), keys, values(big(bound + 1))), (e: unknown) => {
        assert.ok(e instanceof TooLargeError, `${verb}: expected TooLargeError, got ${String(e)}`);
        assert.equal(e.reply, `ERR EMQ.${verb} ${name} must be at most ${bound} bytes`);
        assert.equal(e.argument, name);
        assert.equal(e.maxBytes, bound);
        return true;
      });
    }
    assert.deepEqual(await dumpQueue(server, q, { events: true }), before, "nothing written");
  });

  test("a value at its bound is kept", async () => {
    const { conn } = ctx();
    const q = "sb3";
    const queue = new Queue(q, conn);
    const payload = Buffer.alloc(max("payload"), 0x70);
    const { id } = await queue.add(payload);
    assert.equal((await claim(conn, q, 30_000))?.id, id);
    await progress(conn, q, id, 1, Buffer.alloc(max("progress"), 0x71));
    const line = "l".repeat(max("line"));
    assert.equal(await log(conn, q, id, 1, line), 1);
    await complete(conn, q, id, 1, Buffer.alloc(max("result"), 0x72), 10);
    const done = await queue.getJob(id);
    assert.equal(done?.state, "completed");
    assert.equal(done?.payload.length, max("payload"));
    assert.equal(done?.progress?.length, max("progress"));
    assert.deepEqual(done?.logs, [line]);
    assert.equal(done?.result?.length, max("result"));

    const other = await queue.add("q");
    await claim(conn, q, 30_000);
    const error = "e".repeat(max("error"));
    await fail(conn, q, other.id, 1, error, { backoffMs: 0, maxAttempts: 1, keep: 10 });
    assert.equal((await queue.getJob(other.id))?.error, error);
  });

  test("a worker: an oversized result fails the attempt; an oversized error text is cut to fit", async () => {
    const { conn } = ctx();
    const q = "sb4";
    const queue = new Queue(q, conn);
    const big = await queue.add("result", { maxAttempts: 1 });
    const loud = await queue.add("error", { maxAttempts: 1 });
    const failures: unknown[] = [];
    const worker = new Worker(queue, async (job) => {
      if (job.payload.toString() === "result") return "r".repeat(max("result") + 1);
      throw new Error(`${"ü".repeat(max("error"))}`);
    });
    worker.on("failed", (_job, err) => failures.push(err));
    await until(
      "both jobs dead",
      async () =>
        (await queue.getJob(big.id))?.state === "dead" && (await queue.getJob(loud.id))?.state === "dead",
      15_000,
    );
    await worker.close();
    const resultError = (await queue.getJob(big.id))?.error ?? "";
    assert.match(
      resultError,
      new RegExp(`^TooLargeError: invalid result: ${max("result") + 1} bytes, over its bound`),
    );
    const cut = (await queue.getJob(loud.id))?.error ?? "";
    assert.ok(Buffer.byteLength(cut) <= max("error"), `${Buffer.byteLength(cut)} bytes kept`);
    assert.ok(cut.startsWith("Error: üü"), cut.slice(0, 20));
    const all = Buffer.byteLength(`Error: ${"ü".repeat(max("error"))}`);
    assert.ok(cut.endsWith(`… [cut: ${all} bytes in all]`), cut.slice(-40));
    assert.ok(failures.some((e) => e instanceof TooLargeError));
  });
});

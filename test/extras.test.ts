/**
 * `add`'s extras on both wires: the caller's idempotency key (a second add within the key's ttl
 * answers the first job's id and writes nothing; after the ttl a new job is added; per queue;
 * laned queues route by the key), the group, timeout and parent kept on the row, bad options
 * refused with a typed error before anything is written, and the job timeout: the handler's
 * signal aborts with `TimeoutError`, the attempt fails with it and is retried; a handler that
 * ignores its signal frees its slot at the timeout.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { add, addBulk } from "../src/protocol.js";
import { InvalidArgumentError, Queue, TimeoutError, Worker } from "../src/index.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

forEachWire("add: idempotency keys, groups, timeouts, parents", (ctx) => {
  const keysOf = async (q: string) => (await ctx().conn.send("KEYS", [`emq:{${q}}:*`])) as Buffer[];

  test("a second add with the same key answers the first id and writes nothing", async () => {
    const q = new Queue("idem1", ctx().conn);
    const first = await q.add("charge order 42", { key: "order-42" });
    assert.equal(first.duplicate, false);
    const before = (await keysOf("idem1")).map(String).sort();
    const second = await q.add("charge order 42 again", { key: "order-42", priority: 3, delay: 5000 });
    assert.deepEqual(second, { id: first.id, duplicate: true });
    assert.deepEqual((await keysOf("idem1")).map(String).sort(), before);
    const counts = await q.counts();
    assert.equal(counts.pending, 1);
    assert.equal(counts.scheduled, 0);
    assert.equal((await q.getJob(first.id))?.payload.toString(), "charge order 42");
    const other = await q.add("charge order 43", { key: "order-43" });
    assert.notEqual(other.id, first.id);
    assert.equal(other.duplicate, false);
  });

  test("the key is held for keyTtlMs, then a new job is added", async () => {
    const { conn } = ctx();
    const first = await add(conn, "idem2", "a", { key: "k", keyTtlMs: 300 });
    const pttl = Number(await conn.send("PTTL", ["emq:{idem2}:key:k"]));
    assert.ok(pttl > 0 && pttl <= 300, `the record expires with the ttl, PTTL ${pttl}`);
    assert.equal((await add(conn, "idem2", "b", { key: "k", keyTtlMs: 300 })).id, first.id);
    let again = { id: first.id, duplicate: true };
    await until("the key to expire", async () => {
      again = await add(conn, "idem2", "c", { key: "k", keyTtlMs: 300 });
      return !again.duplicate;
    });
    assert.notEqual(again.id, first.id);
    assert.equal(Number(await conn.send("ZCARD", ["emq:{idem2}:pending"])), 2);
  });

  test("without keyTtlMs the key is held for a day", async () => {
    const { conn } = ctx();
    await add(conn, "idem3", "a", { key: "k" });
    const pttl = Number(await conn.send("PTTL", ["emq:{idem3}:key:k"]));
    assert.ok(pttl > 86_000_000 && pttl <= 86_400_000, `PTTL ${pttl}`);
  });

  test("keys are per queue; addBulk answers a key held earlier in the same batch", async () => {
    const { conn } = ctx();
    const a = await add(conn, "idem4a", "a", { key: "same" });
    const b = await add(conn, "idem4b", "b", { key: "same" });
    assert.equal(b.duplicate, false);
    assert.notEqual(a.id, b.id);
    const batch = await addBulk(conn, "idem4c", [
      { payload: "1", opts: { key: "x" } },
      { payload: "2", opts: { key: "x" } },
      { payload: "3", opts: { key: "y" } },
    ]);
    assert.deepEqual(
      batch.map((r) => r.duplicate),
      [false, true, false],
    );
    assert.equal(batch[1]?.id, batch[0]?.id);
    assert.equal(Number(await conn.send("ZCARD", ["emq:{idem4c}:pending"])), 2);
  });

  test("a laned queue routes a keyed add by its key, so the key is found again", async () => {
    const q = new Queue("idem5", ctx().conn, { lanes: 4 });
    const first = await q.add("a", { key: "order-7" });
    for (let i = 0; i < 6; i++)
      assert.deepEqual(await q.add("again", { key: "order-7" }), { id: first.id, duplicate: true });
    assert.equal((await q.counts()).pending, 1);
  });

  test("forgetKey releases a key early; obliterate releases every key of the queue", async () => {
    const q = new Queue("idem6", ctx().conn);
    const first = await q.add("a", { key: "order-1" });
    assert.equal(await q.forgetKey("order-1"), true);
    assert.equal(await q.forgetKey("order-1"), false, "not held any more");
    const second = await q.add("b", { key: "order-1" });
    assert.equal(second.duplicate, false);
    assert.notEqual(second.id, first.id);
    await assert.rejects(q.forgetKey("a\tb"), /^InvalidArgumentError: invalid key: must be 1 to 255 bytes/);
    for (const k of ["x*", "y?", "[z]", "back\\slash", "plain"]) await q.add("p", { key: k });
    await q.obliterate();
    assert.deepEqual(await keysOf("idem6"), []);
  });

  test("group, timeout and parent are kept on the row", async () => {
    const q = new Queue("extras1", ctx().conn);
    const parentId = (await q.add("parent")).id;
    const { id } = await q.add("child", {
      group: "tenant é 7",
      timeoutMs: 2500,
      parent: { queue: "flows: parent@x", id: parentId },
    });
    const info = await q.getJob(id);
    assert.equal(info?.group, "tenant é 7");
    assert.equal(info?.timeoutMs, 2500);
    assert.deepEqual(info?.parent, { queue: "flows: parent@x", id: parentId });
    const plain = await q.getJob(parentId);
    assert.equal(plain?.group, undefined);
    assert.equal(plain?.timeoutMs, undefined);
    assert.equal(plain?.parent, undefined);
  });

  test("bad extras are refused with a typed error naming the option; nothing is written", async () => {
    const q = new Queue("extras2", ctx().conn);
    const refused: [object, RegExp][] = [
      [{ group: "" }, /^invalid group: must be 1 to 255 bytes of UTF-8 without a control character, got ""/],
      [{ group: "a\tb" }, /^invalid group: must be 1 to 255 bytes/],
      [{ group: "é".repeat(128) }, /^invalid group: must be .* \(256 bytes\)$/],
      [{ group: 7 }, /^invalid group: must be a string, got number$/],
      [{ key: "k\u0000" }, /^invalid key: must be 1 to 255 bytes/],
      [{ keyTtlMs: 1000 }, /^invalid keyTtlMs: is the lifetime of an idempotency key: give `key` too$/],
      [
        { key: "k", keyTtlMs: 0 },
        /^invalid keyTtlMs: must be an integer of milliseconds from 1 to \d+, got 0$/,
      ],
      [{ timeoutMs: -1 }, /^invalid timeoutMs: must be an integer of milliseconds from 1/],
      [{ timeoutMs: 1.5 }, /^invalid timeoutMs: must be an integer/],
      [{ parent: "JOB00000000001" }, /^invalid parent: must be an object, got string "JOB00000000001"$/],
      [
        { parent: { queue: "a{b}", id: "JOB00000000001" } },
        /^invalid parent\.queue: a queue name must not contain '\{'/,
      ],
      [{ parent: { queue: "p", id: "nope" } }, /^invalid parent\.id: /],
    ];
    for (const [opts, text] of refused) {
      await assert.rejects(q.add("x", opts as never), (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError, `${JSON.stringify(opts)}: ${String(err)}`);
        assert.match(err.message, text);
        return true;
      });
    }
    assert.deepEqual(await keysOf("extras2"), []);
  });

  test("a handler past its timeout sees its signal aborted with TimeoutError; the attempt fails and is retried", async () => {
    const q = new Queue("timeout1", ctx().conn);
    const { id } = await q.add("slow first", { timeoutMs: 200, maxAttempts: 3 });
    const reasons: unknown[] = [];
    const worker = new Worker(
      q,
      async (job) => {
        if (job.attempts === 1) {
          await new Promise<void>((resolve) => job.signal.addEventListener("abort", () => resolve()));
          reasons.push(job.signal.reason);
          throw new Error("gave up after the abort");
        }
        return "second attempt done";
      },
      { backoff: { type: "fixed", delayMs: 0 } },
    );
    await until("the retry to complete", async () => (await q.getJob(id))?.state === "completed", 10_000);
    await worker.close();
    const info = await q.getJob(id);
    assert.equal(info?.attempts, 2);
    assert.equal(info?.result?.toString(), "second attempt done");
    assert.equal(reasons.length, 1);
    assert.ok(reasons[0] instanceof TimeoutError);
    assert.equal((reasons[0] as TimeoutError).timeoutMs, 200);
    assert.equal((reasons[0] as TimeoutError).jobId, id);
  });

  test("the failed attempt's error names the timeout; the last attempt goes dead with it", async () => {
    const q = new Queue("timeout2", ctx().conn);
    const { id } = await q.add("always slow", { timeoutMs: 100, maxAttempts: 1 });
    const failures: unknown[] = [];
    const worker = new Worker(
      q,
      (job) =>
        new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(new Error("late")))),
    );
    worker.on("failed", (_job, err) => failures.push(err));
    await until("the job to be dead", async () => (await q.getJob(id))?.state === "dead", 10_000);
    await worker.close();
    assert.match((await q.getJob(id))?.error ?? "", new RegExp(`job ${id} ran past its timeout of 100 ms`));
    assert.ok(failures[0] instanceof TimeoutError, String(failures[0]));
  });

  test("a handler that ignores its signal frees its slot at the timeout", async () => {
    const q = new Queue("timeout3", ctx().conn);
    const stuck = await q.add("stuck", { timeoutMs: 150, maxAttempts: 1 });
    const next = await q.add("next");
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const worker = new Worker(
      q,
      async (job) => {
        ran.push(job.id);
        if (job.id === stuck.id) await held; // never looks at its signal
        return "ok";
      },
      { concurrency: 1 },
    );
    await until(
      "the next job to complete",
      async () => (await q.getJob(next.id))?.state === "completed",
      10_000,
    );
    assert.equal((await q.getJob(stuck.id))?.state, "dead");
    assert.deepEqual(ran, [stuck.id, next.id]);
    release();
    await sleep(50);
    await worker.close();
    assert.equal((await q.getJob(stuck.id))?.state, "dead", "the late result is not reported");
  });

  test("a job without a timeout is not limited", async () => {
    const q = new Queue("timeout4", ctx().conn);
    const { id } = await q.add("plain");
    const worker = new Worker(q, async (job) => {
      await sleep(300);
      return job.signal.aborted ? "aborted" : "fine";
    });
    await until("completion", async () => (await q.getJob(id))?.state === "completed", 10_000);
    await worker.close();
    assert.equal((await q.getJob(id))?.result?.toString(), "fine");
  });
});

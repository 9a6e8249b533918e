/**
 * A full node drains, on both wires: over `maxmemory` the admissions (`enqueue`, `add`,
 * `addBulk`, `retry`) are refused with `OutOfMemoryError` — the server's exact text, nothing
 * written — while every drain and control (claim, extend, complete, fail, promote, reap, remove,
 * pause, resume, requeue; reschedule on wire 6) runs and writes. A read-only replica refuses
 * every verb with the server's `READONLY` text.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { modulePath } from "../tools/module-path.js";
import { connect, OutOfMemoryError, ServerError } from "../src/index.js";
import {
  jobKey,
  queueKey,
  typedServerError,
  reschedule,
  add,
  pause,
  extend,
  addBulk,
  fail,
  claim,
  remove,
  retry,
  resume,
  complete,
  reap,
  promote,
  requeue,
  enqueue,
} from "../src/protocol.js";
import { startValkey } from "./support/valkey.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";
const READONLY = "READONLY You can't write against a read only replica.";

describe("OutOfMemoryError", () => {
  test("a reply starting 'OOM ' becomes OutOfMemoryError (a ServerError, code EMQ_OOM, the server's text)", () => {
    const typed = typedServerError(new ServerError(OOM));
    assert.ok(typed instanceof OutOfMemoryError && typed instanceof ServerError);
    assert.equal(typed.code, "EMQ_OOM");
    assert.equal(typed.message, OOM);
    assert.equal(typed.reply, OOM);
    for (const other of ["ERR EMQ.CLAIM job not found", "OOMX", "ERR OOM command", READONLY]) {
      assert.ok(!(typedServerError(new ServerError(other)) instanceof OutOfMemoryError), other);
    }
  });
});

forEachWire("a full node drains", (ctx) => {
  const cli = (...args: (string | number)[]) => ctx().server.cli(...args);
  const dump = (q: string) => dumpQueue(ctx().server, q);

  /**
   * Runs `body` with the server over `maxmemory`: the limit just below the memory it counts
   * against it, policy noeviction; no limit again afterwards.
   */
  async function full<T>(body: () => Promise<T>): Promise<T> {
    const info = String(await cli("INFO", "memory"));
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)![1]);
    const counted = field("used_memory") - field("mem_not_counted_for_evict");
    await cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
    await cli("CONFIG", "SET", "maxmemory", String(counted - 64 * 1024));
    try {
      return await body();
    } finally {
      await cli("CONFIG", "SET", "maxmemory", "0");
    }
  }

  async function refusedOom(q: string, what: string, run: () => Promise<unknown>): Promise<void> {
    const before = await dump(q);
    await assert.rejects(run(), (e: unknown) => {
      assert.ok(e instanceof OutOfMemoryError, `${what}: expected OutOfMemoryError, got ${String(e)}`);
      assert.equal(e.message, OOM, what);
      assert.equal(e.code, "EMQ_OOM", what);
      return true;
    });
    assert.deepEqual(await dump(q), before, `${what} wrote nothing`);
  }

  test("admissions are refused with OutOfMemoryError before any step of their own; nothing is written", async () => {
    const { conn } = ctx();
    const { id: first } = await enqueue(conn, "fa", "x");
    const job = (await claim(conn, "fa", 30_000))!;
    await fail(conn, "fa", job.id, job.attempts, "boom", { backoffMs: 0, maxAttempts: 1, keep: 10 });
    await full(async () => {
      await refusedOom("fa", "enqueue", () => enqueue(conn, "fa", "y"));
      await refusedOom("fa", "enqueue of a duplicate id", () => enqueue(conn, "fa", "y", { id: first }));
      await refusedOom("fa", "add", () => add(conn, "fa", "y", { priority: 3 }));
      await refusedOom("fa", "add with a delay", () => add(conn, "fa", "y", { delay: 5000 }));
      await refusedOom("fa", "addBulk", () => addBulk(conn, "fa", [{ payload: "a" }, { payload: "b" }]));
      await refusedOom("fa", "retry", () => retry(conn, "fa", first, 2));
    });
    // Memory freed: the same calls go through.
    await retry(conn, "fa", first, 2);
    assert.equal((await enqueue(conn, "fa", "y")).duplicate, false);
  });

  test("drains and controls run and write over maxmemory: a worker empties a full node", async () => {
    const { conn, wire } = ctx();
    const q = "fd";
    const ids: string[] = [];
    for (const p of ["a", "b", "c", "d", "e"]) ids.push((await enqueue(conn, q, p)).id);
    const { id: later } = await add(conn, q, "later", { delay: 1 });
    const [a, b, c, d] = ids as [string, string, string, string];
    await full(async () => {
      const ja = (await claim(conn, q, 30_000))!;
      assert.equal(ja.id, a);
      assert.ok((await extend(conn, q, a, ja.attempts, 60_000)) > ja.deadline);
      await complete(conn, q, a, ja.attempts, "done", 0);
      assert.equal(await cli("EXISTS", jobKey(q, a)), 0, "keep 0 deleted the row");

      const jb = (await claim(conn, q, 30_000))!;
      assert.equal(jb.id, b);
      const failOpts = { backoffMs: 0, maxAttempts: 1, keep: 10 };
      assert.equal(await fail(conn, q, b, jb.attempts, "boom", failOpts), "dead");
      assert.deepEqual(await cli("ZRANGE", queueKey(q, "dead"), "0", "-1"), [b]);

      const jc = (await claim(conn, q, 1))!;
      assert.equal(jc.id, c);
      await sleep(5);
      assert.deepEqual(await reap(conn, q, { limit: 10, maxAttempts: 5, keep: 10 }), {
        requeued: [c],
        dead: [],
      });
      assert.equal(await promote(conn, q, 10), 1, "the delayed job is due");
      assert.equal(await cli("HGET", jobKey(q, later), "state"), "pending");
      assert.equal(await remove(conn, q, d), true);
      assert.equal(await pause(conn, q), true);
      assert.equal(await claim(conn, q, 30_000), null, "paused");
      assert.equal(await resume(conn, q), true);

      const next = (await claim(conn, q, 30_000))!;
      await requeue(conn, q, next.id, next.attempts, 3);
      assert.equal(await cli("HGET", jobKey(q, next.id), "max_attempts"), "4");
      if (wire === 6) {
        const snooze = (await claim(conn, q, 30_000))!;
        assert.ok((await reschedule(conn, q, snooze.id, snooze.attempts, 1000)) > 0);
        assert.equal(await cli("HGET", jobKey(q, snooze.id), "state"), "scheduled");
      }
      // The rest drains to empty.
      for (;;) {
        const job = await claim(conn, q, 30_000);
        if (job === null) break;
        await complete(conn, q, job.id, job.attempts, "ok", 0);
      }
    });
    const left = await dump(q);
    assert.equal(left[`emq:{${q}}:pending`], undefined, "pending drained");
    assert.equal(left[`emq:{${q}}:active`], undefined, "nothing leased");
  });

  test("wire 4: a script the server forgot is loaded again over maxmemory (a drain runs, an admission is refused)", async (t) => {
    const { conn, wire } = ctx();
    if (wire !== 4) return t.skip("wire 4 only: wire 6 sends no scripts");
    await enqueue(conn, "fs", "x");
    await cli("SCRIPT", "FLUSH");
    await full(async () => {
      const job = await claim(conn, "fs", 30_000);
      assert.equal(job?.payload.toString(), "x");
      await refusedOom("fs", "enqueue after SCRIPT FLUSH", () => enqueue(conn, "fs", "y"));
    });
  });
});

forEachWire("a read-only replica", (ctx) => {
  test("every verb is refused with the server's READONLY text before it runs; nothing is written", async () => {
    const { conn, server, wire } = ctx();
    const { id } = await enqueue(conn, "ro", "x");
    const job = (await claim(conn, "ro", 30_000))!;
    const replica = await startValkey({
      ...(wire === 6 ? { module: modulePath() } : {}),
      replicaOf: { host: "127.0.0.1", port: server.port },
    });
    const onReplica = await connect({ port: replica.port, wire });
    try {
      const before = await dumpQueue(replica, "ro");
      const failOpts = { backoffMs: 0, maxAttempts: 3, keep: 10 };
      const calls: [string, () => Promise<unknown>][] = [
        ["enqueue", () => enqueue(onReplica, "ro", "y")],
        ["add", () => add(onReplica, "ro", "y", { delay: 10 })],
        ["claim", () => claim(onReplica, "ro", 30_000)],
        ["extend", () => extend(onReplica, "ro", id, job.attempts, 1000)],
        ["complete", () => complete(onReplica, "ro", id, job.attempts, "r", 10)],
        ["fail", () => fail(onReplica, "ro", id, job.attempts, "e", failOpts)],
        ["requeue", () => requeue(onReplica, "ro", id, job.attempts, 3)],
        ["retry", () => retry(onReplica, "ro", id)],
        ["promote", () => promote(onReplica, "ro", 10)],
        ["reap", () => reap(onReplica, "ro", { limit: 10, maxAttempts: 3, keep: 10 })],
        ["remove", () => remove(onReplica, "ro", id)],
        ["pause", () => pause(onReplica, "ro")],
        ["resume", () => resume(onReplica, "ro")],
      ];
      for (const [what, run] of calls) {
        await assert.rejects(run(), (e: unknown) => {
          assert.ok(e instanceof ServerError, `${what}: ${String(e)}`);
          assert.equal(e.message, READONLY, what);
          return true;
        });
      }
      assert.deepEqual(await dumpQueue(replica, "ro"), before);
    } finally {
      await onReplica.close();
      await replica.stop();
    }
  });
});

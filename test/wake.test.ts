/**
 * The wake channel on both wires: one `SPUBLISH emq:{q}:wake <n>` (a shard channel, in the
 * queue's slot) per call that put ids into `pending`, `<n>` naming how many; nothing otherwise.
 * A plain or pattern subscriber does not receive it; a replica's shard subscriber does.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  jobKey,
  reschedule,
  add,
  pause,
  extend,
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
import { k, lifecycle } from "./support/lifecycle.js";
import { forEachWire } from "./support/wires.js";

forEachWire("wake", (ctx) => {
  const { cli, wakeCounter } = lifecycle(ctx);

  /* ------------------------------------------------------------------ wake */

  test("wake: one message per call that put ids into pending, naming how many; 0 when an id entered the schedule; none otherwise", async () => {
    const { conn } = ctx();
    const w = await wakeCounter("w");
    const none: string[] = [];
    try {
      assert.deepEqual(await w.messages(() => add(conn, "w", "a")), ["1"], "ADD delay 0");
      assert.deepEqual(await w.messages(() => enqueue(conn, "w", "b")), ["1"], "ENQUEUE");
      assert.deepEqual(
        await w.messages(() => add(conn, "w", "c", { delay: 60_000 })),
        ["0"],
        "ADD delay > 0",
      );
      const a = (await claim(conn, "w", 30_000))!;
      assert.deepEqual(await w.messages(() => claim(conn, "w", 30_000)), none, "CLAIM");
      const failNow = { backoffMs: 0, maxAttempts: 5, keep: 5 };
      assert.deepEqual(
        await w.messages(() => fail(conn, "w", a.id, a.attempts, "e", failNow)),
        ["1"],
        "FAIL backoff 0",
      );
      const b = (await claim(conn, "w", 30_000))!;
      const failLater = { backoffMs: 1, maxAttempts: 5, keep: 5 };
      assert.deepEqual(
        await w.messages(() => fail(conn, "w", b.id, b.attempts, "e", failLater)),
        ["0"],
        "FAIL backoff > 0",
      );
      await sleep(5);
      assert.deepEqual(await w.messages(() => promote(conn, "w", 10)), ["1"], "PROMOTE moving one id");
      assert.deepEqual(await w.messages(() => promote(conn, "w", 10)), none, "PROMOTE no-op");
      const c = (await claim(conn, "w", 30_000))!;
      const failDead = { backoffMs: 0, maxAttempts: 1, keep: 5 };
      assert.deepEqual(
        await w.messages(() => fail(conn, "w", c.id, c.attempts, "e", failDead)),
        none,
        "FAIL dead",
      );
      assert.deepEqual(await w.messages(() => retry(conn, "w", c.id, 3)), ["1"], "RETRY");
      const d = (await claim(conn, "w", 1))!;
      await sleep(5);
      const reapOpts = { limit: 10, maxAttempts: 5, keep: 5 };
      assert.deepEqual(await w.messages(() => reap(conn, "w", reapOpts)), ["1"], "REAP requeue");
      assert.deepEqual(await w.messages(() => reap(conn, "w", reapOpts)), none, "REAP no-op");
      const e = (await claim(conn, "w", 30_000))!;
      assert.deepEqual(await w.messages(() => extend(conn, "w", e.id, e.attempts, 60_000)), none, "EXTEND");
      assert.deepEqual(
        await w.messages(() => complete(conn, "w", e.id, e.attempts, "r", 5)),
        none,
        "COMPLETE",
      );
      assert.deepEqual(await w.messages(() => remove(conn, "w", d.id)), none, "REMOVE");
      // Three ids due together: one message naming 3.
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(await w.messages(() => add(conn, "w", "z", { delay: 1 })), ["0"], "ADD delay 1");
      }
      await sleep(5);
      assert.deepEqual(await w.messages(() => promote(conn, "w", 10)), ["3"], "PROMOTE of 3 ids");
      // Two expired leases reaped in one call: one message naming 2 (the dead one is not counted).
      const [r1, r2, r3] = [
        (await claim(conn, "w", 1))!,
        (await claim(conn, "w", 1))!,
        (await claim(conn, "w", 1))!,
      ];
      await cli("HSET", jobKey("w", r3.id), "max_attempts", "1");
      await sleep(5);
      const reaped = await w.messages(() => reap(conn, "w", reapOpts));
      assert.deepEqual(reaped, ["2"], `REAP of ${r1.id}, ${r2.id} back, ${r3.id} dead`);
      // RESUME names the ids ready in pending (r1, r2 and one more), and nothing when none is ready.
      assert.deepEqual(await w.messages(() => pause(conn, "w")), none, "PAUSE");
      assert.deepEqual(await w.messages(() => add(conn, "w", "y")), ["1"], "ADD while paused");
      assert.equal(await cli("ZCARD", k("w", "pending")), 3);
      assert.deepEqual(await w.messages(() => resume(conn, "w")), ["3"], "RESUME with 3 ready");
      assert.deepEqual(await w.messages(() => resume(conn, "w")), none, "RESUME when not paused");
      await pause(conn, "w2");
      assert.deepEqual(await w.messages(() => resume(conn, "w")), none, "RESUME of another queue");
      const w2 = await wakeCounter("w2");
      try {
        assert.deepEqual(await w2.messages(() => resume(conn, "w2")), none, "RESUME with nothing ready");
        assert.equal(await pause(conn, "w2"), true);
        assert.deepEqual(await w2.messages(() => add(conn, "w2", "later", { delay: 60_000 })), ["0"]);
        assert.deepEqual(await w2.messages(() => resume(conn, "w2")), none, "RESUME with only scheduled");
      } finally {
        await w2.close();
      }
      const f = (await claim(conn, "w", 30_000))!;
      assert.deepEqual(await w.messages(() => requeue(conn, "w", f.id, f.attempts, 5)), ["1"], "REQUEUE");
      if (ctx().wire === 6) {
        const g = (await claim(conn, "w", 30_000))!;
        assert.deepEqual(
          await w.messages(() => reschedule(conn, "w", g.id, g.attempts, 1000)),
          ["0"],
          "RESCHEDULE",
        );
      }
    } finally {
      await w.close();
    }
  });
});

/**
 * The timed moves on both wires, checked against the raw keyspace: PROMOTE (due ids only, limits,
 * orphans, 50,000 due at one millisecond) and REAP (expired leases back to pending or dead, limits,
 * orphans). The rest of the lifecycle: lifecycle.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { add, claim, jobKey, newId, promote, queueKey, reap } from "../src/protocol.js";
import { k, lifecycle, NOT_JOB } from "./support/lifecycle.js";
import { forEachWire } from "./support/wires.js";

forEachWire("job lifecycle: PROMOTE and REAP", (ctx) => {
  const { cli, dump, serverMs, timed, within, epoch, leased } = lifecycle(ctx);

  /* ------------------------------------------------------------------ PROMOTE */

  test("PROMOTE: moves due ids only, limit at a time, oldest first; keeps priority; orphans removed, not counted", async () => {
    const { conn } = ctx();
    const now = await serverMs();
    const due: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId();
      due.push(id);
      await cli("ZADD", k("p", "schedule"), String(now - 100 + i), id);
      await cli("HSET", jobKey("p", id), "state", "scheduled", "attempts", "0", "payload", `d${i}`);
    }
    await cli("HSET", jobKey("p", due[1]!), "priority", "-3");
    const future = (await add(conn, "p", "f", { delay: 600_000 })).id;
    assert.equal(await promote(conn, "p", 2), 2);
    assert.deepEqual((await dump("p"))["emq:{p}:pending"], [due[1], "-3", due[0], "0"]);
    assert.equal(await cli("HGET", jobKey("p", due[0]!), "state"), "pending");
    assert.equal(await promote(conn, "p", 10_000), 3);
    assert.equal(await promote(conn, "p", 10), 0, "nothing due");
    const snap = await dump("p");
    assert.deepEqual((snap["emq:{p}:schedule"] as string[])[0], future);
    assert.equal((snap["emq:{p}:schedule"] as string[]).length, 2);
    assert.equal((snap["emq:{p}:pending"] as string[]).length, 10);
    for (const id of due) assert.equal((snap[jobKey("p", id)] as Record<string, string>).state, "pending");

    // An orphan id and a non-JOB id (even with a hash row) are removed and not counted.
    const orphan = newId();
    const good = newId();
    await cli("ZADD", k("o", "schedule"), "1", orphan, "2", NOT_JOB, "3", good);
    await cli("HSET", queueKey("o", "job:") + NOT_JOB, "state", "scheduled");
    await cli("HSET", jobKey("o", good), "state", "scheduled", "attempts", "0", "payload", "g");
    assert.equal(await promote(conn, "o", 10), 1);
    assert.deepEqual(await dump("o"), {
      [queueKey("o", "job:") + NOT_JOB]: { state: "scheduled" },
      [jobKey("o", good)]: { state: "pending", attempts: "0", payload: "g" },
      "emq:{o}:pending": [good, "0"],
    });
  });

  test("PROMOTE: 50,000 ids due at one millisecond all move, 10,000 per call in id order; none lost, all claimable", async () => {
    const { conn } = ctx();
    const ids = Array.from({ length: 50_000 }, () => newId()).sort();
    const dueAt = (await serverMs()) - 1;
    await cli(
      "EVAL",
      "for i = 2, #ARGV do redis.call('HSET', KEYS[1] .. ARGV[i], 'state', 'scheduled', 'attempts', '0', " +
        "'payload', ARGV[i]); redis.call('ZADD', KEYS[2], ARGV[1], ARGV[i]) end return 1",
      2,
      queueKey("big", "job:"),
      k("big", "schedule"),
      String(dueAt),
      ...ids,
    );
    for (let call = 1; call <= 5; call++) {
      assert.equal(await promote(conn, "big", 10_000), 10_000);
      const pending = (await cli("ZRANGE", k("big", "pending"), "0", "-1")) as string[];
      assert.deepEqual(pending, ids.slice(0, call * 10_000), `after call ${call}: the oldest ids, in order`);
    }
    assert.equal(await promote(conn, "big", 10_000), 0);
    assert.equal(await cli("EXISTS", k("big", "schedule")), 0);
    const claimed: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const jobs = await Promise.all(Array.from({ length: 5000 }, () => claim(conn, "big", 60_000)));
      for (const job of jobs) claimed.push(job!.id);
    }
    assert.equal(await claim(conn, "big", 60_000), null);
    assert.deepEqual(claimed.sort(), ids);
    assert.equal(await cli("ZCARD", k("big", "active")), 50_000);
  });

  /* ------------------------------------------------------------------ REAP */

  test("REAP: expired leases back to pending (at priority), exhausted ones dead with 'lease expired'; live leases kept", async () => {
    const { conn } = ctx();
    const e = await epoch();
    const back = await leased("rp", "b", { priority: 2 }, 1);
    const gone = await leased("rp", "g", { maxAttempts: 1 }, 1);
    const live = await leased("rp", "l", {}, 600_000);
    await sleep(5);
    const { value, lo, hi } = await timed(() => reap(conn, "rp", { limit: 100, maxAttempts: 3, keep: 10 }));
    assert.deepEqual(value, { requeued: [back.id], dead: [gone.id] });
    const snap = await dump("rp");
    assert.deepEqual(snap[jobKey("rp", back.id)], {
      state: "pending",
      attempts: "1",
      payload: "b",
      priority: "2",
      ...e,
      ...back.on,
    });
    assert.deepEqual(snap[jobKey("rp", gone.id)], {
      state: "dead",
      attempts: "1",
      payload: "g",
      max_attempts: "1",
      error: "lease expired",
      ...e,
      ...gone.on,
    });
    assert.deepEqual(snap["emq:{rp}:pending"], [back.id, "2"]);
    assert.deepEqual(snap["emq:{rp}:active"], [live.id, String(live.deadline)]);
    const dead = snap["emq:{rp}:dead"] as string[];
    assert.equal(dead[0], gone.id);
    within(dead[1]!, lo, hi, "dead time");
    assert.deepEqual(await reap(conn, "rp", { limit: 100, maxAttempts: 3, keep: 10 }), {
      requeued: [],
      dead: [],
    });
  });

  test("REAP: limit respected (earliest deadline first), caller's max attempts, keep 0, orphans dropped", async () => {
    const { conn } = ctx();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await leased("rl", `p${i}`, {}, 1)).id);
    await sleep(5);
    assert.deepEqual(await reap(conn, "rl", { limit: 2, maxAttempts: 5, keep: 1 }), {
      requeued: ids.slice(0, 2),
      dead: [],
    });
    assert.equal(await cli("ZCARD", k("rl", "active")), 3);
    assert.deepEqual(await reap(conn, "rl", { limit: 10, maxAttempts: 1, keep: 0 }), {
      requeued: [],
      dead: ids.slice(2),
    });
    for (const id of ids.slice(2)) assert.equal(await cli("EXISTS", jobKey("rl", id)), 0);
    assert.equal(await cli("EXISTS", k("rl", "dead")), 0);

    const orphan = newId();
    await cli("ZADD", k("ro", "active"), "1", orphan, "2", NOT_JOB);
    await cli("HSET", queueKey("ro", "job:") + NOT_JOB, "state", "active");
    assert.deepEqual(await reap(conn, "ro", { limit: 10, maxAttempts: 3, keep: 1 }), {
      requeued: [],
      dead: [],
    });
    assert.deepEqual(await dump("ro"), { [queueKey("ro", "job:") + NOT_JOB]: { state: "active" } });
  });
});

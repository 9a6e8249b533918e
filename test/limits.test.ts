/**
 * Flow control on both wires against real servers: limits stored on the server and read back,
 * bad values refused (typed, nothing written), the claim's limited replies, a queue rate of
 * 100 per second measured over 10 s, a global concurrency that four workers never exceed, group
 * concurrency and rate that hold a group back without slowing the others, and counters that do
 * not drift through completions, failures, reaps and hand-backs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { claimVerb, complete, fail, reap } from "../src/jobs.js";
import { InvalidArgumentError, type Job, Queue, ServerError, Worker } from "../src/index.js";
import { type KeyType, queueKey } from "../src/keyspace.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} } };

forEachWire("flow control", (ctx) => {
  /** `n` jobs on `q`, each in the group `group(i)` (none when it returns undefined). */
  async function seed(q: Queue, n: number, group: (i: number) => string | undefined): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const g = group(i);
      const { id } = await q.add(`j${i}`, g === undefined ? {} : { group: g });
      ids.push(id);
    }
    return ids;
  }
  const card = async (q: string, type: KeyType) => Number(await ctx().server.cli("ZCARD", queueKey(q, type)));
  const exists = async (key: string) => Number(await ctx().server.cli("EXISTS", key)) === 1;

  test("limits are stored on the server, read back, replaced and cleared", async () => {
    const q = new Queue("fl1", ctx().conn);
    await q.setLimits({ rate: { max: 100, durationMs: 1000 }, concurrency: 10, group: { concurrency: 2 } });
    await q.setGroupLimits("vip", { rate: { max: 5, durationMs: 60_000 } });
    await q.setGroupLimits("free", {});
    assert.deepEqual(await q.limits(), {
      rate: { max: 100, durationMs: 1000 },
      concurrency: 10,
      group: { concurrency: 2 },
      groups: { vip: { rate: { max: 5, durationMs: 60_000 } }, free: {} },
    });
    await q.setLimits({ concurrency: 3 });
    await q.setGroupLimits("vip", null);
    assert.deepEqual(await q.limits(), { concurrency: 3, groups: { free: {} } });
    await q.setLimits({});
    await q.setGroupLimits("free", null);
    assert.deepEqual(await q.limits(), { groups: {} });
    assert.equal(await exists(queueKey("fl1", "limits")), false, "no limits, no key");
    assert.equal(Number(await ctx().server.cli("HEXISTS", queueKey("fl1", "meta"), "limits")), 0, "nor flag");
  });

  test("a queue without limits reads nothing of them: the flag in meta follows the limits", async () => {
    const q = new Queue("fl1b", ctx().conn);
    const flag = () => ctx().server.cli("HGET", queueKey("fl1b", "meta"), "limits");
    await q.setGroupLimits("g", { concurrency: 1 });
    assert.equal(String(await flag()), "1");
    // The flag off, limits stored behind the queue's back are not read.
    await ctx().server.cli("HDEL", queueKey("fl1b", "meta"), "limits");
    await seed(q, 2, () => "g");
    const conn = ctx().conn;
    const [a, b] = [await claimVerb(conn, "fl1b", 30_000), await claimVerb(conn, "fl1b", 30_000)];
    assert.ok(a && "id" in a && b && "id" in b, "both claimed: the group limit is not read");
    await q.setGroupLimits("g", null);
    assert.equal(await flag(), null);
  });

  test("bad limit values are refused on the host, typed, nothing written", async () => {
    const q = new Queue("fl2", ctx().conn);
    const bad: [unknown, RegExp][] = [
      [{ concurrency: 0 }, /invalid limits\.concurrency: must be an integer from 1/],
      [{ concurrency: 1.5 }, /invalid limits\.concurrency/],
      [{ rate: { max: 10 } }, /invalid limits\.rate\.durationMs: must be an integer of milliseconds/],
      [{ rate: { max: -1, durationMs: 10 } }, /invalid limits\.rate\.max/],
      [{ group: { concurrency: "2" } }, /invalid limits\.group\.concurrency/],
      [{ rate: 5 }, /invalid limits\.rate/],
      [null, /invalid limits/],
    ];
    for (const [limits, message] of bad) {
      await assert.rejects(q.setLimits(limits as never), (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError, String(err));
        assert.match(err.message, message);
        return true;
      });
    }
    for (const group of ["", "a\nb", "x".repeat(256)]) {
      await assert.rejects(q.setGroupLimits(group, { concurrency: 1 }), InvalidArgumentError);
    }
    assert.equal(await exists(queueKey("fl2", "limits")), false);
  });

  test("the server refuses bad values itself, naming them, nothing written", async () => {
    const keys = [queueKey("fl3", "pending"), queueKey("fl3", "")];
    const refusals: [string[], string][] = [
      [["queues", "", "1", "1", "1"], "ERR EMQ.LIMIT scope must be queue, default, group or ungroup"],
      [["queue", "g", "1", "1", "1"], "ERR EMQ.LIMIT group must be empty for scope queue"],
      [["group", "", "1", "1", "1"], "ERR EMQ.LIMIT group must be 1-255 bytes without control characters"],
      [["queue", "", "x", "1", "1"], "ERR EMQ.LIMIT rate max must be a non-negative integer"],
      [
        ["queue", "", "1", "-1", "1"],
        "ERR EMQ.LIMIT rate duration must be a non-negative integer of milliseconds",
      ],
      [["queue", "", "1", "1", "01"], "ERR EMQ.LIMIT concurrency must be a non-negative integer"],
      [["queue", "", "5", "0", "1"], "ERR EMQ.LIMIT rate max and duration must both be 0 or both positive"],
    ];
    for (const [values, text] of refusals) {
      await assert.rejects(ctx().conn.engine.run("LIMIT", keys, values), (err: unknown) => {
        assert.ok(err instanceof ServerError);
        assert.equal(err.reply, text);
        return true;
      });
    }
    assert.equal(await exists(queueKey("fl3", "limits")), false);
  });

  test("a full queue concurrency or rate window answers limited, claiming nothing", async () => {
    const conn = ctx().conn;
    const q = new Queue("fl4", conn);
    await seed(q, 3, () => undefined);
    await q.setLimits({ concurrency: 1 });
    const first = await claimVerb(conn, "fl4", 30_000);
    assert.ok(first && "id" in first);
    assert.deepEqual(await claimVerb(conn, "fl4", 30_000), { limited: true, waitMs: 0 });
    assert.equal(await card("fl4", "pending"), 2, "nothing popped");
    await complete(conn, "fl4", first.id, first.attempts, "ok", 10);
    await q.setLimits({ rate: { max: 1, durationMs: 60_000 } });
    const second = await claimVerb(conn, "fl4", 30_000);
    assert.ok(second && "id" in second);
    const limited = await claimVerb(conn, "fl4", 30_000);
    assert.ok(limited && "limited" in limited);
    assert.ok(limited.waitMs > 50_000 && limited.waitMs <= 60_000, `waits ${limited.waitMs} ms`);
    assert.equal(await q.add("x").then(() => card("fl4", "pending")), 2);
  });

  test("rate 100 per 1000 ms: 100 jobs/s ± 5% over 10 s", async (t) => {
    const q = new Queue("fl5", ctx().conn);
    await q.setLimits({ rate: { max: 100, durationMs: 1000 } });
    await q.addBulk(Array.from({ length: 1300 }, (_, i) => ({ payload: `r${i}` })));
    const started: number[] = [];
    const worker = new Worker(q, async () => void started.push(Date.now()), { concurrency: 20, ...quiet });
    await until("the first job", () => started.length > 0, 10_000);
    await sleep(10_500);
    await worker.close();
    const t0 = started[0]!;
    const within = started.filter((t) => t < t0 + 10_000).length;
    t.diagnostic(`${within} jobs started in the 10 s from the first`);
    assert.ok(within >= 950 && within <= 1050, `${within} jobs started in 10 s (want 1000 ± 5%)`);
  });

  test("4 workers × concurrency 20 under a global limit of 10 never exceed 10 active, and drain", async (t) => {
    const q = new Queue("fl6", ctx().conn);
    await q.setLimits({ concurrency: 10 });
    await q.addBulk(Array.from({ length: 400 }, (_, i) => ({ payload: `c${i}` })));
    let running = 0;
    let most = 0;
    let done = 0;
    const handler = async () => {
      running += 1;
      most = Math.max(most, running);
      await sleep(5 + Math.floor(Math.random() * 10));
      running -= 1;
      done += 1;
    };
    const workers = Array.from({ length: 4 }, () => new Worker(q, handler, { concurrency: 20, ...quiet }));
    let sampledMost = 0;
    let samples = 0;
    while (done < 400) {
      sampledMost = Math.max(sampledMost, await card("fl6", "active"));
      samples += 1;
      await sleep(5);
      if (samples > 6000) assert.fail(`not drained: ${done} done`);
    }
    await Promise.all(workers.map((w) => w.close()));
    t.diagnostic(
      `at most ${most} handlers at once, ZCARD active at most ${sampledMost} (${samples} samples)`,
    );
    assert.ok(most <= 10, `handlers running at once: ${most}`);
    assert.ok(sampledMost <= 10, `ZCARD active sampled at most ${sampledMost}`);
    assert.ok(most >= 5, `the limit is used (${most} at once)`);
    assert.equal(await card("fl6", "active"), 0);
  });

  test("group concurrency holds each group to its limit across 4 workers; counters end at zero", async () => {
    const q = new Queue("fl7", ctx().conn);
    await q.setLimits({ group: { concurrency: 3 } });
    await q.setGroupLimits("big", { concurrency: 6 });
    const groups = ["a", "b", "big"];
    await seed(q, 240, (i) => groups[i % 3]);
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    let done = 0;
    const handler = async (job: Job) => {
      const g = String(await ctx().conn.send("HGET", [queueKey("fl7", `job:${job.id}`), "group"]));
      running.set(g, (running.get(g) ?? 0) + 1);
      most.set(g, Math.max(most.get(g) ?? 0, running.get(g)!));
      await sleep(5 + Math.floor(Math.random() * 10));
      running.set(g, running.get(g)! - 1);
      done += 1;
    };
    const workers = Array.from({ length: 4 }, () => new Worker(q, handler, { concurrency: 20, ...quiet }));
    await until("every job done", () => done === 240, 60_000);
    await Promise.all(workers.map((w) => w.close()));
    assert.ok((most.get("a") ?? 0) <= 3 && (most.get("b") ?? 0) <= 3, JSON.stringify([...most]));
    assert.ok((most.get("big") ?? 0) <= 6, JSON.stringify([...most]));
    assert.ok((most.get("big") ?? 0) > 3, `the group's own limit is used: ${JSON.stringify([...most])}`);
    assert.equal(await exists(queueKey("fl7", "groups")), false, "every group's active count back to 0");
    assert.equal(await exists(queueKey("fl7", "parked")), false, "nothing parked");
  });

  test("a limited group does not slow an unlimited group", async () => {
    const q = new Queue("fl8", ctx().conn);
    await q.setGroupLimits("slow", { concurrency: 1 });
    await seed(q, 20, () => "slow");
    await seed(q, 200, (i) => (i % 2 === 0 ? "fast" : undefined));
    const finished: Record<string, number> = { slow: 0, fast: 0 };
    let slowRunning = 0;
    let slowMost = 0;
    let slowDoneWhenFastDone = -1;
    const handler = async (job: Job) => {
      const g = String(await ctx().conn.send("HGET", [queueKey("fl8", `job:${job.id}`), "group"]));
      if (g === "slow") {
        slowRunning += 1;
        slowMost = Math.max(slowMost, slowRunning);
        await sleep(150);
        slowRunning -= 1;
        finished.slow! += 1;
      } else {
        finished.fast! += 1;
        if (finished.fast === 200) slowDoneWhenFastDone = finished.slow!;
      }
    };
    const worker = new Worker(q, handler, { concurrency: 8, ...quiet });
    await until("every job done", () => finished.slow === 20 && finished.fast === 200, 30_000);
    await worker.close();
    assert.equal(slowMost, 1);
    assert.ok(
      slowDoneWhenFastDone < 15,
      `the other jobs were done while ${slowDoneWhenFastDone} slow ones were`,
    );
  });

  test("a group over its rate waits in schedule for its window; the others pass", async () => {
    const conn = ctx().conn;
    const q = new Queue("fl9", conn);
    await q.setGroupLimits("g", { rate: { max: 1, durationMs: 60_000 } });
    const [a, b] = await seed(q, 2, () => "g");
    const [c] = await seed(q, 1, () => undefined);
    const first = await claimVerb(conn, "fl9", 30_000);
    assert.ok(first && "id" in first && first.id === a);
    const second = await claimVerb(conn, "fl9", 30_000);
    assert.ok(second && "id" in second && second.id === c, "the held-back head is passed over");
    assert.equal(String(await ctx().server.cli("HGET", queueKey("fl9", `job:${b}`), "state")), "scheduled");
    const due = Number(await ctx().server.cli("ZSCORE", queueKey("fl9", "schedule"), b!));
    assert.ok(due > Date.now() + 50_000, "due at the window's end");
  });

  test("counters do not drift through fail, reap, hand-back and completion", async () => {
    const conn = ctx().conn;
    const q = new Queue("fl10", conn);
    await q.setLimits({ group: { concurrency: 1 } });
    const ids = await seed(q, 4, () => "g");
    const one = await claimVerb(conn, "fl10", 30_000);
    assert.ok(one && "id" in one && one.id === ids[0]);
    assert.equal(await claimVerb(conn, "fl10", 30_000), null, "the others are parked");
    assert.equal(await card("fl10", "group:g"), 3);
    assert.deepEqual(await q.groups(), { g: { active: 1, parked: 3 } });
    assert.equal(
      await fail(conn, "fl10", one.id, 1, "e", { backoffMs: 0, maxAttempts: 5, keep: 10 }),
      "pending",
    );
    const two = await claimVerb(conn, "fl10", 1);
    assert.ok(two && "id" in two && two.id === ids[0], "FIFO in the group: the failed job first");
    await sleep(10);
    assert.deepEqual((await reap(conn, "fl10", { limit: 10, maxAttempts: 5, keep: 10 })).requeued, [ids[0]]);
    assert.equal(await card("fl10", "group:g"), 1, "each release unparks one");
    const worker = new Worker(q, async () => "ok", { concurrency: 4, ...quiet });
    await until("all done", async () => (await card("fl10", "done")) === 4, 10_000);
    await worker.close();
    assert.equal(await exists(queueKey("fl10", "groups")), false);
    assert.equal(await exists(queueKey("fl10", "parked")), false);
    assert.equal(await exists(queueKey("fl10", "group:g")), false);
    assert.deepEqual(await q.groups(), {});
  });
});

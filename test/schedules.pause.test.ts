/**
 * Pausing and resuming a schedule on both wires, with real servers and workers: a paused schedule
 * adds no job while its instants pass (its entry waits at the paused score), a resume fires again
 * from the next instant after now with no job for the instants it was paused over, the last fired
 * instant advances; a paused schedule replaced stays paused; a resume past its end ends it; an
 * unknown schedule and a resume of a running one are typed errors naming it, nothing written; and
 * the CLI's `schedule pause|resume` and `schedules --json`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Job, InvalidArgumentError, Queue, ScheduleNotFoundError, Worker } from "../src/index.js";
import { ScheduleNotPausedError } from "../src/errors.js";
import { instantId } from "../src/schedules/options.js";
import { assertBuilt, echomq, echomqJson } from "./support/cli.js";
import { until } from "./support/until.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PAUSED_SCORE = "9007199254740991";

forEachWire("schedule pause", (ctx) => {
  test("paused: no job while instants pass; resumed: fires from now, no burst; last fired advances", async () => {
    const { conn } = ctx();
    const q = new Queue("beats", conn);
    const jobs: Job[] = [];
    const worker = new Worker(q, async (job) => void jobs.push(job), { idleCheckMs: 50 });
    try {
      const made = await q.schedule("beat", { everyMs: 1000, payload: "b" });
      await until("two jobs", async () => jobs.length >= 2, 20_000);
      assert.equal(await q.pauseSchedule("beat"), true);
      assert.equal(await q.pauseSchedule("beat"), false, "already paused: nothing written");
      const [held] = await q.schedules();
      assert.equal(held!.paused, true);
      assert.ok(held!.fired >= 2);
      // The last job added was the instant before the record's next; nothing fires now.
      assert.equal(held!.lastFired, held!.next - 1000);
      assert.ok(held!.lastFired! >= made.next + 1000);
      assert.equal(String(await conn.send("ZSCORE", ["emq:{beats}:repeats", "beat"])), PAUSED_SCORE);
      await until("the jobs added before the pause ran", async () => jobs.length === held!.fired);

      await sleep(3500); // three or four instants of a 1 s schedule pass
      const [still] = await q.schedules();
      assert.deepEqual(still, held, "the record is as it was: no instant fired");
      assert.equal(jobs.length, held!.fired);

      const resumed = await q.resumeSchedule("beat");
      assert.equal(resumed.name, "beat");
      assert.ok(resumed.next! >= held!.next + 3000, "the next instant is after now, not the one held");
      const [armed] = await q.schedules();
      assert.deepEqual([armed!.paused, armed!.next, armed!.fired], [false, resumed.next, held!.fired]);
      await until("two jobs after the resume", async () => jobs.length >= held!.fired + 2, 20_000);
      // The instants the schedule was paused over got no job: no burst.
      for (let at = held!.next; at < resumed.next!; at += 1000) {
        assert.equal(await q.getJob(instantId("beats", "beat", at)), null, `no job for ${at}`);
      }
      const after = jobs.slice(held!.fired).map((j) => j.id);
      assert.deepEqual(after.slice(0, 2), [
        instantId("beats", "beat", resumed.next!),
        instantId("beats", "beat", resumed.next! + 1000),
      ]);
      const [later] = await q.schedules();
      assert.ok(later!.lastFired! >= resumed.next! + 1000, "last fired advanced past the resume");
    } finally {
      await worker.close();
    }
  });

  test("unknown schedule, resume of a running one: typed errors naming it, nothing written", async () => {
    const { conn, server } = ctx();
    const q = new Queue("errs", conn);
    await q.schedule("real", { everyMs: 60_000, payload: "r" });
    const before = await dumpQueue(server, "errs");
    await assert.rejects(q.pauseSchedule("ghost"), (err: unknown) => {
      assert.ok(err instanceof ScheduleNotFoundError);
      assert.equal(err.code, "EMQ_SCHEDULE_NOT_FOUND");
      assert.equal(err.message, 'queue errs has no schedule "ghost"');
      return true;
    });
    await assert.rejects(q.resumeSchedule("ghost"), ScheduleNotFoundError);
    await assert.rejects(q.resumeSchedule("real"), (err: unknown) => {
      assert.ok(err instanceof ScheduleNotPausedError);
      assert.equal(err.code, "EMQ_SCHEDULE_NOT_PAUSED");
      assert.equal(err.message, 'schedule "real" of queue errs is not paused: nothing to resume');
      return true;
    });
    await assert.rejects(q.pauseSchedule(""), InvalidArgumentError);
    await assert.rejects(
      new Queue("laned", conn, { lanes: 4 }).pauseSchedule("real"),
      /pauseSchedule: a laned queue has no schedules/,
    );
    assert.deepEqual(await dumpQueue(server, "errs"), before);
  });

  test("a paused schedule replaced stays paused; a resume after its end ends it", async () => {
    const { conn } = ctx();
    const q = new Queue("ends", conn);
    await q.schedule("s", { everyMs: 60_000, payload: "a" });
    await q.pauseSchedule("s");
    assert.equal((await q.schedule("s", { everyMs: 60_000, payload: "a" })).outcome, "unchanged");
    assert.equal((await q.schedule("s", { everyMs: 30_000, payload: "b" })).outcome, "replaced");
    const [replaced] = await q.schedules();
    assert.equal(replaced!.paused, true);
    assert.equal(String(await conn.send("ZSCORE", ["emq:{ends}:repeats", "s"])), PAUSED_SCORE);

    const now = Date.now();
    await q.schedule("short", { everyMs: 100, endAt: now + 1500, payload: "c" });
    await q.pauseSchedule("short");
    await sleep(2000);
    assert.deepEqual(await q.resumeSchedule("short"), { name: "short", next: null });
    assert.deepEqual(
      (await q.schedules()).map((s) => s.name),
      ["s"],
    );
  });

  test("the CLI: schedule pause|resume, and schedules --json shows paused and last fired", async () => {
    assertBuilt();
    const { conn, server } = ctx();
    const env = { VALKEY_URL: `redis://127.0.0.1:${server.port}` };
    const q = new Queue("cli-s", conn);
    await q.schedule("tick", { everyMs: 60_000, payload: "t" });
    const paused = await echomqJson(["schedule", "pause", "cli-s", "tick"], env);
    assert.deepEqual(paused, { queue: "cli-s", schedule: "tick", paused: true, changed: true });
    const listed = await echomqJson<{ schedules: { name: string; paused: boolean; lastFired: null }[] }>(
      ["schedules", "cli-s"],
      env,
    );
    assert.deepEqual(
      listed.schedules.map((s) => [s.name, s.paused, s.lastFired]),
      [["tick", true, null]],
    );
    const text = await echomq(["schedules", "cli-s"], env);
    assert.match(text.stdout, /tick\s+paused\s+0\s+-/);
    const resumed = await echomqJson<{ next: number }>(["schedule", "resume", "cli-s", "tick"], env);
    assert.deepEqual(resumed, {
      queue: "cli-s",
      schedule: "tick",
      paused: false,
      next: (await q.schedules())[0]!.next,
    });
    const again = await echomq(["schedule", "resume", "cli-s", "tick"], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /schedule "tick" of queue cli-s is not paused: nothing to resume/);
    const bad = await echomq(["schedule", "stop", "cli-s", "tick"], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /schedule takes pause or resume, got "stop"/);
  });
});

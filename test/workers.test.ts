/**
 * Workers visible: each worker announces itself on its wake subscriber's client name (id,
 * concurrency, busy slots, host, pid), `listWorkers` reads them back from `CLIENT LIST`, and the
 * CLI's reads (`workers`, `schedules`, `flows`, `groups`, `--json`) show what the server holds —
 * on both wires. A worker leaves the list when it closes, and when its process is killed (the
 * server drops the connection). The busy counts expected are the jobs the test holds open.
 */
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { test } from "node:test";
import { FlowProducer, type Job, Queue, Worker } from "../src/index.js";
import { listWorkers, type WorkerInfo } from "../src/observe/workers.js";
import { parseWakeClientName, wakeClientName } from "../src/observe/worker-name.js";
import { startChildWorker } from "./support/announcing-worker.js";
import { assertBuilt, echomqJson } from "./support/cli.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

test("a wake subscriber's name carries the announcement and reads back, odd names included", () => {
  for (const queue of ["plain", "a b %;c=1", "é%3B;x"]) {
    const announced = { id: "a1b2", concurrency: 12, busy: 3, host: "web 1;%", pid: 4242 };
    const name = wakeClientName(queue, announced);
    assert.match(name, /^[!-~]+$/, queue);
    assert.deepEqual(parseWakeClientName(name), { queue, announced });
    assert.deepEqual(parseWakeClientName(wakeClientName(queue)), { queue, announced: null });
  }
  assert.equal(parseWakeClientName("emq-lane-x"), null);
});

/** Holds each job open until released (later jobs then finish at once); counts the jobs started. */
function holding() {
  const open: (() => void)[] = [];
  let started = 0;
  let released = false;
  return {
    handler: (_job: Job) =>
      new Promise<string>((resolve) => {
        started += 1;
        if (released) resolve("ok");
        else open.push(() => resolve("ok"));
      }),
    get started() {
      return started;
    },
    release() {
      released = true;
      for (const r of open.splice(0)) r();
    },
  };
}

forEachWire("workers visible", (ctx) => {
  const url = () => `redis://127.0.0.1:${ctx().server.port}`;
  const mine = async (queue: string, pid = process.pid): Promise<WorkerInfo[]> =>
    (await listWorkers(ctx().conn, queue)).filter((w) => w.pid === pid);

  test("a worker appears with its concurrency and busy slots, and leaves when it closes", async () => {
    const q = new Queue("visible", ctx().conn);
    const hold = holding();
    const worker = new Worker(q, hold.handler, { concurrency: 3 });
    await worker.ready;
    const idle = await mine("visible");
    assert.equal(idle.length, 1);
    assert.equal(idle[0]!.busy, 0);
    for (const p of ["a", "b"]) await q.add(p);
    await until("both jobs to start", () => hold.started === 2);
    const counts = await q.counts();
    await until(
      "the announcement to show the busy slots",
      async () => (await mine("visible"))[0]?.busy === counts.active,
    );
    const [seen] = await mine("visible");
    assert.equal(seen!.concurrency, 3);
    assert.equal(seen!.host, hostname());
    assert.equal(seen!.queue, "visible");
    assert.match(seen!.id!, /^[0-9a-f]{12}$/);

    assertBuilt();
    const cli = await echomqJson<{ workers: WorkerInfo[] }>(["workers", "visible"], { VALKEY_URL: url() });
    assert.deepEqual(
      cli.workers.map((w) => [w.queue, w.id, w.concurrency, w.busy, w.pid]),
      [["visible", seen!.id, 3, counts.active, process.pid]],
    );

    hold.release();
    await until("the slots to be free again", async () => (await mine("visible"))[0]?.busy === 0);
    // Renamed (0 → 2 → 0 busy) and still subscribed: the wake channel reaches the same socket.
    const wakeLine = String(await ctx().server.cli("CLIENT", "LIST"))
      .split("\n")
      .find((line) => line.includes(` name=emq-wake-visible%;i=${seen!.id};`));
    assert.match(wakeLine ?? "", / ssub=1 /, "the renamed socket still holds its shard subscription");
    assert.match(wakeLine ?? "", / age=\d+ /);
    await worker.close();
    await until("the closed worker to leave", async () => (await mine("visible")).length === 0);
  });

  test("a killed worker process leaves the list when its connection drops", async () => {
    const q = new Queue("killed", ctx().conn);
    const child = await startChildWorker({ port: ctx().server.port, wire: ctx().wire }, "killed", 4);
    for (const p of ["a", "b", "c"]) await q.add(p);
    await until("the child to hold every job", async () => (await q.counts()).active === 3);
    await until(
      "the child's announcement to show 3 busy slots",
      async () => (await mine("killed", child.pid))[0]?.busy === 3,
      10_000,
    );
    assert.equal((await mine("killed", child.pid))[0]!.concurrency, 4);
    await child.kill();
    await until("the killed worker to leave", async () => (await mine("killed", child.pid)).length === 0);
  });

  test("the CLI reads schedules, a flow and flow-control groups (--json)", async () => {
    const conn = ctx().conn;
    const env = { VALKEY_URL: url() };
    const sq = new Queue("ticks", conn);
    const made = await sq.schedule("every-minute", { everyMs: 60_000, payload: "tick" });
    const { schedules } = await echomqJson<{ schedules: { queue: string; name: string; next: number }[] }>(
      ["schedules"],
      env,
    );
    assert.deepEqual(schedules, [
      { ...schedules[0], queue: "ticks", name: "every-minute", next: made.next, fired: 0, payload: "tick" },
    ]);

    const node = await new FlowProducer(conn).add({
      queue: "parents",
      payload: "p",
      children: [
        { queue: "kids", payload: "k1" },
        { queue: "kids", payload: "k2" },
      ],
    });
    type Flow = { state: string; childrenLeft: number; children: { id: string; state: string | null }[] };
    const before = await echomqJson<Flow>(["flows", "parents", node.id], env);
    assert.deepEqual([before.state, before.childrenLeft, before.children], ["waiting", 2, []]);
    const kids = new Worker(new Queue("kids", conn), async (job) => `done ${job.text()}`);
    await until(
      "the parent to be ready",
      async () => (await new Queue("parents", conn).getJob(node.id))?.state === "pending",
    );
    await kids.close();
    const after = await echomqJson<Flow>(["flows", "parents", node.id], env);
    assert.deepEqual([after.state, after.childrenLeft], ["pending", 0]);
    assert.deepEqual(
      after.children.map((c) => [c.id, c.state]).sort(),
      node.children!.map((c) => [c.id, "completed"]).sort(),
    );

    const gq = new Queue("grouped", conn);
    await gq.setLimits({ group: { concurrency: 1 } });
    for (const p of ["a", "b", "c"]) await gq.add(p, { group: "g1" });
    const hold = holding();
    const worker = new Worker(gq, hold.handler, { concurrency: 3 });
    await until("one job of the group to run", () => hold.started === 1);
    await until("the others to be parked", async () => (await gq.groups()).g1?.parked === 2);
    const groups = await echomqJson<{ limits: unknown; groups: unknown[] }>(["groups", "grouped"], env);
    assert.deepEqual(groups.limits, { group: { concurrency: 1 } });
    assert.deepEqual(groups.groups, [{ group: "g1", active: 1, parked: 2, limits: null }]);
    hold.release();
    await worker.close();
  });
});

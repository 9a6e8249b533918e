/**
 * Flows on both wires: a parent runs exactly once, after all its children (in several queues,
 * odd names included); the failure policy (`fail`, `ignore`); the relay run twice (idempotent);
 * nested flows; a partial add completed by adding the same flow again; typed refusals before
 * anything is written.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { claim, complete, newId } from "../src/protocol.js";
import {
  FlowProducer,
  InvalidArgumentError,
  type Job,
  Queue,
  Worker,
  type WorkerOptions,
} from "../src/index.js";
import { InvalidQueueNameError } from "../src/errors.js";
import { Relay } from "../src/flows/relay.js";
import { addParent, settle } from "../src/jobs/flows.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const FAST: WorkerOptions = { promoteEveryMs: 50, reapEveryMs: 100, idleCheckMs: 200 };
const ODD = ["a b", "ünï ✓", "a:b@c", "x".repeat(255), "job:JOB00000000001"];
/** Names a worker can serve (its wake socket's client name takes no space or special character). */
const WORKABLE = ["a:b@c", "x/y.z=1"];

/** Workers on `queues`, each recording when its handler ran. */
function workers(
  ctx: () => { conn: Parameters<typeof claim>[0] },
  queues: string[],
  handler: (job: Job, q: string) => unknown,
  opts: WorkerOptions = {},
) {
  const runs: { queue: string; id: string; at: number }[] = [];
  let tick = 0;
  const all = queues.map(
    (name) =>
      new Worker(
        new Queue(name, ctx().conn),
        (job) => {
          runs.push({ queue: name, id: job.id, at: ++tick });
          return handler(job, name);
        },
        { ...FAST, ...opts },
      ),
  );
  return { runs, close: () => Promise.all(all.map((w) => w.close())) };
}

/** Runs `body` with workers on `queues`, closing them however it ends. */
async function withWorkers(
  ctx: () => { conn: Parameters<typeof claim>[0] },
  queues: string[],
  handler: (job: Job, q: string) => unknown,
  body: (runs: { queue: string; id: string; at: number }[]) => Promise<void>,
): Promise<{ queue: string; id: string; at: number }[]> {
  const w = workers(ctx, queues, handler);
  try {
    await body(w.runs);
  } finally {
    await w.close();
  }
  return w.runs;
}

forEachWire("flows", (ctx) => {
  test("a parent runs exactly once, after all its children in three queues", async () => {
    const flows = new FlowProducer(ctx().conn);
    const node = await flows.add({
      queue: "reports",
      payload: "summary",
      children: [
        { queue: "pages", payload: "p1" },
        { queue: "pages", payload: "p2" },
        { queue: "images", payload: "i1" },
        { queue: WORKABLE[0]!, payload: "o1" },
        { queue: WORKABLE[1]!, payload: "o2" },
      ],
    });
    assert.equal(node.children.length, 5);
    const reports = new Queue("reports", ctx().conn);
    const waiting = await reports.getJob(node.id);
    assert.equal(waiting?.state, "waiting");
    assert.equal(waiting?.childrenLeft, 5);
    assert.deepEqual(
      (await reports.getJobs("waiting")).map((j) => j.id),
      [node.id],
    );
    let seenAtParent: Record<string, string> | null = null;
    const runs = await withWorkers(
      ctx,
      ["reports", "pages", "images", ...WORKABLE],
      async (job, q) => {
        if (q === "reports") seenAtParent = await reports.getChildrenValues(job.id);
        return `done ${job.text()}`;
      },
      async (runs) => {
        await until("the parent ran", () => runs.some((r) => r.queue === "reports"), 10_000);
        await new Promise((r) => setTimeout(r, 300));
      },
    );
    const w = { runs };
    const parentRuns = w.runs.filter((r) => r.queue === "reports");
    assert.equal(parentRuns.length, 1, "the parent ran exactly once");
    const childRuns = w.runs.filter((r) => r.queue !== "reports");
    assert.equal(childRuns.length, 5);
    assert.ok(
      childRuns.every((r) => r.at < parentRuns[0]!.at),
      "every child ran before its parent",
    );
    const want = Object.fromEntries(
      node.children.map((c, i) => [`${c.queue}:${c.id}`, `done ${["p1", "p2", "i1", "o1", "o2"][i]}`]),
    );
    assert.deepEqual(seenAtParent, want);
    assert.deepEqual(await reports.getChildrenValues(node.id), want);
    for (const q of ["pages", "images", ...WORKABLE]) {
      assert.equal(await ctx().server.cli("ZCARD", `emq:{${q}}:outbox`), 0, `${q}'s outbox is empty`);
    }
  });

  test("a child that dies fails its parent, naming the child (default policy)", async () => {
    const flows = new FlowProducer(ctx().conn);
    const node = await flows.add({
      queue: "parents",
      payload: "p",
      children: [
        { queue: "kids", payload: "ok" },
        { queue: "kids", payload: "bad", opts: { maxAttempts: 1 } },
      ],
    });
    const bad = node.children[1]!;
    const parents = new Queue("parents", ctx().conn);
    const runs = await withWorkers(
      ctx,
      ["parents", "kids"],
      (job) => {
        if (job.text() === "bad") throw new Error("boom");
        return "fine";
      },
      async () => {
        await until(
          "the parent is dead",
          async () => (await parents.getJob(node.id))?.state === "dead",
          10_000,
        );
        await new Promise((r) => setTimeout(r, 200));
      },
    );
    const w = { runs };
    assert.equal(w.runs.filter((r) => r.queue === "parents").length, 0, "the parent never ran");
    const info = await parents.getJob(node.id);
    assert.equal(info?.error, `child kids:${bad.id} failed: Error: boom`);
    const children = await parents.getChildren(node.id);
    assert.deepEqual(children?.failures, { [`kids:${bad.id}`]: "Error: boom" });
  });

  test("onChildFailure ignore: a dead child counts as settled; its error is kept", async () => {
    const flows = new FlowProducer(ctx().conn);
    const node = await flows.add({
      queue: "lenient",
      payload: "p",
      opts: { onChildFailure: "ignore" },
      children: [
        { queue: "kids2", payload: "ok" },
        { queue: "kids2", payload: "bad", opts: { maxAttempts: 1 } },
      ],
    });
    await withWorkers(
      ctx,
      ["lenient", "kids2"],
      (job) => {
        if (job.text() === "bad") throw new Error("boom");
        return "fine";
      },
      (runs) => until("the parent ran", () => runs.some((r) => r.queue === "lenient"), 10_000),
    );
    const children = await new Queue("lenient", ctx().conn).getChildren(node.id);
    const [ok, bad] = node.children;
    assert.deepEqual(children, {
      values: { [`kids2:${ok!.id}`]: "fine" },
      failures: { [`kids2:${bad!.id}`]: "Error: boom" },
    });
  });

  test("a relay that runs twice (two relays, and a settle repeated) drops the count once", async () => {
    const { conn } = ctx();
    const node = await new FlowProducer(conn).add({
      queue: "twice",
      payload: "p",
      children: [
        { queue: "c1", payload: "a" },
        { queue: "c1", payload: "b" },
      ],
    });
    const first = await claim(conn, "c1", 30_000);
    await complete(conn, "c1", first!.id, first!.attempts, "r1", 10);
    // Two relays of the same outbox at once, then the same settle by hand: one count.
    const relay = () =>
      new Relay(
        conn,
        "c1",
        { batch: 10, everyMs: 60_000, pokeMs: 5 },
        { error: (e) => assert.fail(String(e)) },
      );
    await Promise.all([relay().round(), relay().round()]);
    const parent = { queue: "twice", id: node.id };
    assert.equal(await settle(conn, parent, "c1", first!.id, "completed", "r1"), "duplicate");
    assert.equal(await ctx().server.cli("HGET", `emq:{twice}:job:${node.id}`, "children"), "1");
    assert.equal(await ctx().server.cli("HGET", `emq:{twice}:job:${node.id}`, "state"), "waiting");
    const second = await claim(conn, "c1", 30_000);
    await complete(conn, "c1", second!.id, second!.attempts, "r2", 10);
    assert.deepEqual(await relay().round(), { relayed: 1, more: false });
    assert.deepEqual(await relay().round(), { relayed: 0, more: false });
    assert.equal(await ctx().server.cli("HGET", `emq:{twice}:job:${node.id}`, "state"), "pending");
    assert.equal((await claim(conn, "twice", 30_000))?.id, node.id);
    assert.equal(await ctx().server.cli("ZCARD", "emq:{c1}:outbox"), 0);
  });

  test("odd queue names on both ends of a flow", async () => {
    const { conn } = ctx();
    for (const parentQueue of ODD) {
      const node = await new FlowProducer(conn).add({
        queue: parentQueue,
        payload: "p",
        children: ODD.map((q) => ({ queue: q, payload: q })),
      });
      for (const q of ODD) {
        const job = await claim(conn, q, 30_000);
        assert.ok(job);
        await complete(conn, q, job.id, job.attempts, `r ${q}`, 10);
        await new Relay(
          conn,
          q,
          { batch: 100, everyMs: 60_000, pokeMs: 5 },
          { error: (e) => assert.fail(String(e)) },
        ).round();
      }
      const values = await new Queue(parentQueue, conn).getChildrenValues(node.id);
      assert.deepEqual(
        values,
        Object.fromEntries(node.children.map((c) => [`${c.queue}:${c.id}`, `r ${c.queue}`])),
      );
      // The parent is first in its queue (the children of this round are claimed already).
      assert.equal((await claim(conn, parentQueue, 30_000))?.id, node.id, parentQueue);
    }
  });

  test("a nested flow: grandchildren, then the child, then the root", async () => {
    const node = await new FlowProducer(ctx().conn).add({
      queue: "root",
      payload: "r",
      children: [
        {
          queue: "mid",
          payload: "m",
          children: [
            { queue: "leaf", payload: "l1" },
            { queue: "leaf", payload: "l2" },
          ],
        },
        { queue: "leaf", payload: "l3" },
      ],
    });
    const runs = await withWorkers(
      ctx,
      ["root", "mid", "leaf"],
      (job) => job.text(),
      (runs) => until("the root ran", () => runs.some((r) => r.queue === "root"), 10_000),
    );
    const w = { runs };
    const at = (q: string) => w.runs.filter((r) => r.queue === q).map((r) => r.at);
    assert.equal(at("root").length, 1);
    assert.equal(at("mid").length, 1);
    assert.ok(Math.max(...at("leaf")) < at("root")[0]!);
    assert.equal(at("leaf").length, 3);
    const mid = node.children[0]!;
    assert.deepEqual(
      Object.keys((await new Queue("mid", ctx().conn).getChildrenValues(mid.id)) ?? {}).length,
      2,
    );
    assert.deepEqual(await new Queue("root", ctx().conn).getChildrenValues(node.id), {
      [`mid:${mid.id}`]: "m",
      [`leaf:${node.children[1]!.id}`]: "l3",
    });
  });

  test("a leaf child takes add's options (group, timeoutMs), not an idempotency key", async () => {
    await assert.rejects(
      new FlowProducer(ctx().conn).add({
        queue: "opts-p",
        payload: "p",
        children: [{ queue: "opts-c", payload: "c", opts: { key: "order-1" } }],
      }),
      /invalid flow\.children\[0\]\.opts\.key: is not an option of a flow's job/,
    );
    const node = await new FlowProducer(ctx().conn).add({
      queue: "opts-p",
      payload: "p",
      children: [{ queue: "opts-c", payload: "c", opts: { group: "g1", timeoutMs: 5000 } }],
    });
    const child = await new Queue("opts-c", ctx().conn).getJob(node.children[0]!.id);
    assert.equal(child?.group, "g1");
    assert.equal(child?.timeoutMs, 5000);
    assert.deepEqual(child?.parent, { queue: "opts-p", id: node.id });
  });

  test("a parent takes name and backoff: kept on its row, its retry waits by its own backoff", async () => {
    const { conn, server } = ctx();
    const node = await new FlowProducer(conn).add({
      queue: "named-p",
      payload: "p",
      opts: { name: "assemble é", backoff: { type: "fixed", delayMs: 600_000 }, maxAttempts: 2 },
      children: [{ queue: "named-c", payload: "c", opts: { name: "part" } }],
    });
    const parent = await new Queue("named-p", conn).getJob(node.id);
    assert.equal(parent?.name, "assemble é");
    assert.deepEqual(parent?.backoff, { type: "fixed", delayMs: 600_000 });
    assert.equal((await new Queue("named-c", conn).getJob(node.children[0]!.id))?.name, "part");
    // The parent's first attempt fails: it waits its own 10 minutes, not the worker's 1 ms.
    const w = workers(
      ctx,
      ["named-p", "named-c"],
      (_job, q) => {
        if (q === "named-p") throw new Error("not yet");
      },
      { backoff: { type: "fixed", delayMs: 1 } },
    );
    try {
      await until(
        "the parent is scheduled for its retry",
        async () => (await new Queue("named-p", conn).getJob(node.id))?.state === "scheduled",
        10_000,
      );
    } finally {
      await w.close();
    }
    const due = Number(await server.cli("ZSCORE", "emq:{named-p}:schedule", node.id));
    const [secs] = (await server.cli("TIME")) as unknown as string[];
    assert.ok(due - Number(secs) * 1000 > 500_000, `due in ${due - Number(secs) * 1000} ms`);
    for (const [opts, argument] of [
      [{ name: "a\nb" }, "flow.opts.name"],
      [{ name: "x".repeat(256) }, "flow.opts.name"],
      [{ backoff: -5 }, "flow.opts.backoff"],
      [{ backoff: { type: "fixed", delay: 5 } }, "flow.opts.backoff.delay"],
    ] as [Record<string, unknown>, string][]) {
      await assert.rejects(
        new FlowProducer(conn).add({
          queue: "named-bad",
          payload: "p",
          opts,
          children: [{ queue: "c", payload: "c" }],
        }),
        (err: unknown) => err instanceof InvalidArgumentError && err.argument === argument,
        JSON.stringify(opts),
      );
    }
    assert.deepEqual(await server.cli("KEYS", "emq:{named-bad}:*"), []);
  });

  test("a partial add (the parent only) is completed by adding the same flow again", async () => {
    const { conn } = ctx();
    const [pid, a, b] = [newId(), newId(), newId()];
    // As a producer that crashed after the parent's write would leave it.
    assert.equal(await addParent(conn, "again", pid, "p", ["0", "0", "2", "fail", "", "", ""]), true);
    const flow = {
      queue: "again",
      payload: "p",
      opts: { id: pid },
      children: [
        { queue: "again-kids", payload: "a", opts: { id: a } },
        { queue: "again-kids", payload: "b", opts: { id: b } },
      ],
    };
    const node = await new FlowProducer(conn).add(flow);
    assert.equal(node.duplicate, true);
    assert.deepEqual(
      node.children.map((c) => c.duplicate),
      [false, false],
    );
    const repeat = await new FlowProducer(conn).add(flow);
    assert.deepEqual(
      repeat.children.map((c) => c.duplicate),
      [true, true],
    );
    const runs = await withWorkers(
      ctx,
      ["again", "again-kids"],
      () => "ok",
      async (runs) => {
        await until("the parent ran", () => runs.some((r) => r.queue === "again"), 10_000);
        await new Promise((r) => setTimeout(r, 200));
      },
    );
    const w = { runs };
    assert.equal(w.runs.length, 3);
  });

  test("refusals name what is wrong, before anything is written", async () => {
    const flows = new FlowProducer(ctx().conn);
    await assert.rejects(
      flows.add({ queue: "ok", payload: "p", children: [{ queue: "a{b}", payload: "c" }] }),
      InvalidQueueNameError,
    );
    await assert.rejects(
      flows.add({
        queue: "ok",
        payload: "p",
        opts: { onChildFailure: "skip" as "fail" },
        children: [{ queue: "c", payload: "c" }],
      }),
      (err: unknown) =>
        err instanceof InvalidArgumentError &&
        /flow\.opts\.onChildFailure: must be "fail" or "ignore"/.test(err.message),
    );
    await assert.rejects(
      flows.add({ queue: "ok", payload: "p", opts: { delay: 5 }, children: [{ queue: "c", payload: "c" }] }),
      (err: unknown) => err instanceof InvalidArgumentError && err.argument === "flow.opts.delay",
    );
    await assert.rejects(
      flows.add({
        queue: "ok",
        payload: "p",
        opts: { timeoutMs: 5 },
        children: [{ queue: "c", payload: "c" }],
      }),
      /invalid flow\.opts\.timeoutMs: is not an option of a job with children/,
    );
    await assert.rejects(
      flows.add({
        queue: "ok",
        payload: "p",
        children: [{ queue: "c", payload: "c", opts: { parent: { queue: "x", id: newId() } } as never }],
      }),
      (err: unknown) =>
        err instanceof InvalidArgumentError && err.argument === "flow.children[0].opts.parent",
    );
    await assert.rejects(
      flows.add({ queue: "ok", payload: "p", children: [{ queue: "c", payload: 5 as unknown as string }] }),
      (err: unknown) => err instanceof InvalidArgumentError && err.argument === "flow.children[0].payload",
    );
    assert.deepEqual(await ctx().server.cli("KEYS", "emq:*"), []);
  });
});

test("parseEntry: the first four NULs split an entry; anything else is not an entry", async () => {
  const { parseEntry } = await import("../src/jobs/flows.js");
  const entry = (s: string) => Buffer.from(s, "utf8");
  assert.deepEqual(parseEntry(entry("a b:c@é\0JOB1\0JOB2\0completed\0x\0y")), {
    parent: { queue: "a b:c@é", id: "JOB1" },
    childId: "JOB2",
    outcome: "completed",
    value: entry("x\0y"),
  });
  assert.equal(parseEntry(entry("q\0JOB1\0JOB2\0failed\0"))?.value.length, 0);
  for (const bad of [
    "q\0JOB1\0JOB2\0completed",
    "q\0JOB1\0JOB2\0done\0v",
    "\0JOB1\0JOB2\0failed\0v",
    "a{b\0JOB1\0JOB2\0failed\0v",
    "q\0X1\0JOB2\0failed\0v",
    "q\0JOB1\0X2\0failed\0v",
  ]) {
    assert.equal(parseEntry(entry(bad)), null, JSON.stringify(bad));
  }
});

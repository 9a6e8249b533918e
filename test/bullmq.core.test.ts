/**
 * `echomq/bullmq` on the core's job model, both wires: a job added here is the core's job (its
 * row's `name`, its data as the payload's JSON, its own `backoff` and `maxAttempts`), read and run
 * the same by the core `Queue` and `Worker`, and the reverse; the BullMQ `Job`'s fields from the
 * row (`attemptsMade`, `processedOn`, `finishedOn`, `timestamp`, `returnvalue`, `failedReason`,
 * `progress`, `opts`); `updateData`; `waitUntilFinished`; `UnrecoverableError`; a flow's parent and
 * a scheduler's jobs with the core's row `name` and `backoff`, and rows and records an older
 * release wrote with the envelope read the same.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { idTime } from "../src/branded-id.js";
import {
  type Job,
  Queue,
  QueueEvents,
  UnrecoverableError,
  Worker,
  InvalidArgumentError,
  FlowProducer,
} from "../src/bullmq.js";
import { encodeEnvelope } from "../src/bullmq/codec.js";
import { type Job as CoreJob, Queue as CoreQueue, Worker as CoreWorker } from "../src/index.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const quiet = { logger: { warn: () => {} }, promoteEveryMs: 50 };

forEachWire("bullmq: the core's job model", (ctx) => {
  const open: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(o: T): T => {
    open.push(o);
    return o;
  };
  const closeAll = async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  };
  const queue = (name: string) => track(new Queue(name, { connection: ctx().conn }));
  const worker = (name: string, f: (job: Job) => unknown) =>
    track(new Worker(name, async (job) => f(job), { connection: ctx().conn }));

  test("a job added here is the core's: name, data, attempts and backoff on its row; the core Worker runs it", async (t) => {
    t.after(closeAll);
    const q = queue("bc-to-core");
    const added = await q.add(
      "charge",
      { order: 42, note: "é" },
      { attempts: 2, backoff: { type: "fixed", delay: 300 } },
    );
    const text = await q.add("greet", "hello"); // a string is data: stored as its JSON
    const core = new CoreQueue("bc-to-core", ctx().conn);
    const info = await core.getJob(added.id);
    assert.deepEqual(
      [info?.name, info?.payload.toString(), info?.maxAttempts, info?.backoff],
      ["charge", '{"order":42,"note":"é"}', 2, { type: "fixed", delayMs: 300 }],
    );
    assert.equal((await core.getJob(text.id))?.payload.toString(), '"hello"');
    const runs: { id: string; data: unknown; at: number }[] = [];
    const w = new CoreWorker(
      core,
      (job: CoreJob) => {
        runs.push({ id: job.id, data: job.data, at: job.processedOn });
        if (job.id === added.id && job.attempts === 1) throw new Error("once");
        return "ok";
      },
      { ...quiet, attempts: 5, backoff: { type: "fixed", delayMs: 0 } },
    );
    t.after(() => w.close());
    await until("both done", async () => (await core.getJob(added.id))?.state === "completed");
    await until("text done", async () => (await core.getJob(text.id))?.state === "completed");
    const charge = runs.filter((r) => r.id === added.id);
    assert.deepEqual(
      charge.map((r) => r.data),
      [
        { order: 42, note: "é" },
        { order: 42, note: "é" },
      ],
    );
    // The row's own backoff (300 ms), not the core worker's (0 ms), spaced the two attempts.
    assert.ok(charge[1]!.at - charge[0]!.at >= 300, `${charge[1]!.at - charge[0]!.at} ms apart`);
    assert.equal(runs.find((r) => r.id === text.id)?.data, "hello");
  });

  test("a core job reads here the same: name, data, opts; this Worker runs it with its row's backoff", async (t) => {
    t.after(closeAll);
    const core = new CoreQueue("bc-from-core", ctx().conn);
    const a = await core.add(
      { to: "ada" },
      { name: "mail", maxAttempts: 3, backoff: { type: "exponential", delayMs: 200 }, priority: 2 },
    );
    const bare = await core.add({ n: 1 }); // no name
    const q = queue("bc-from-core");
    const read = await q.getJob(a.id);
    assert.deepEqual(
      [read?.name, read?.data, read?.opts],
      ["mail", { to: "ada" }, { attempts: 3, priority: 2, backoff: { type: "exponential", delay: 200 } }],
    );
    assert.deepEqual([(await q.getJob(bare.id))?.name, (await q.getJob(bare.id))?.data], ["", { n: 1 }]);
    const seen: { name: string; data: unknown; opts: unknown; made: number; on: number | undefined }[] = [];
    worker("bc-from-core", (job) => {
      seen.push({
        name: job.name,
        data: job.data,
        opts: job.opts,
        made: job.attemptsMade,
        on: job.processedOn,
      });
      if (job.id === a.id && job.attemptsMade < 2) throw new Error(`try ${job.attemptsMade}`);
      return job.attemptsMade;
    });
    await until("a completed", async () => (await core.getJob(a.id))?.state === "completed");
    const mail = seen.filter((s) => s.name === "mail");
    assert.deepEqual(
      mail.map((s) => [s.data, s.made]),
      [
        [{ to: "ada" }, 0],
        [{ to: "ada" }, 1],
        [{ to: "ada" }, 2],
      ],
    );
    assert.deepEqual(mail[0]!.opts, read?.opts);
    // Exponential from 200 ms: 200, then 400 between the attempts (the row's, no jitter).
    assert.ok(mail[1]!.on! - mail[0]!.on! >= 200, `${mail[1]!.on! - mail[0]!.on!} ms`);
    assert.ok(mail[2]!.on! - mail[1]!.on! >= 400, `${mail[2]!.on! - mail[1]!.on!} ms`);
    assert.equal((await core.getJob(a.id))?.result?.toString(), "2");
  });

  test("a finished job's fields from its row: attemptsMade, processedOn, finishedOn, timestamp, returnvalue, failedReason, progress", async (t) => {
    t.after(closeAll);
    const q = queue("bc-fields");
    const good = await q.add("good", { x: 1 });
    const bad = await q.add("bad", { x: 2 }, { attempts: 2 });
    const on = new Map<string, number>();
    worker("bc-fields", async (job) => {
      on.set(`${job.name}:${job.attemptsMade}`, job.processedOn!);
      await job.updateProgress({ at: job.attemptsMade });
      if (job.name === "bad") throw new Error(`no ${job.attemptsMade}`);
      return { doubled: job.data.x * 2 };
    });
    await until("both finished", async () => (await q.getJob(bad.id))?.finishedOn !== undefined);
    await until("good finished", async () => (await q.getJob(good.id))?.finishedOn !== undefined);
    const g = (await q.getJob(good.id))!;
    const b = (await q.getJob(bad.id))!;
    assert.deepEqual(
      [g.attemptsMade, g.returnvalue, g.progress, g.timestamp, g.failedReason],
      [1, { doubled: 2 }, { at: 0 }, idTime(good.id), undefined],
    );
    assert.deepEqual(
      [b.attemptsMade, b.failedReason, b.progress, await b.getState()],
      [2, "no 1", { at: 1 }, "failed"],
    );
    assert.ok(g.finishedOn! >= on.get("good:0")! && on.get("good:0")! >= g.timestamp);
    assert.ok(b.finishedOn! >= on.get("bad:1")! && on.get("bad:1")! >= on.get("bad:0")!);
    // The row's processed_on: the last attempt's lease time, the processor's own processedOn.
    assert.deepEqual([g.processedOn, b.processedOn], [on.get("good:0"), on.get("bad:1")]);
    const [listed] = await q.getFailed();
    assert.deepEqual([listed?.id, listed?.finishedOn], [bad.id, b.finishedOn]);
  });

  test("updateData: a waiting job's, and in the processor for its next attempt; the core reads it", async (t) => {
    t.after(closeAll);
    const q = queue("bc-update");
    const job = await q.add("resize", { w: 1 }, { attempts: 2 });
    await job.updateData({ w: 2 });
    assert.deepEqual([job.data, (await q.getJob(job.id))?.data], [{ w: 2 }, { w: 2 }]);
    const seen: unknown[] = [];
    worker("bc-update", async (j) => {
      seen.push(j.data);
      if (j.attemptsMade === 0) {
        await j.updateData({ w: 3 });
        assert.deepEqual(j.data, { w: 3 });
        throw new Error("again");
      }
      return "done";
    });
    await until("done", async () => (await q.getJob(job.id))?.returnvalue === "done");
    assert.deepEqual(seen, [{ w: 2 }, { w: 3 }]);
    const core = new CoreQueue("bc-update", ctx().conn);
    assert.deepEqual(
      [(await core.getJob(job.id))?.name, (await core.getJob(job.id))?.payload.toString()],
      ["resize", '{"w":3}'],
    );
  });

  test("UnrecoverableError (this entry's, or any named so, as BullMQ's) and discard() fail the job at once", async (t) => {
    t.after(closeAll);
    const q = queue("bc-unrecoverable");
    const events = track(new QueueEvents("bc-unrecoverable", { connection: ctx().conn }));
    await events.waitUntilReady();
    const ours = await q.add("a", {}, { attempts: 5 });
    const theirs = await q.add("b", {}, { attempts: 5 });
    const discarded = await q.add("c", {}, { attempts: 5 });
    const failedWith: string[] = [];
    class BullUnrecoverable extends Error {
      override name = "UnrecoverableError";
    }
    let runs = 0;
    const w = worker("bc-unrecoverable", (job) => {
      runs++;
      if (job.name === "c") {
        job.discard(); // BullMQ's: this failure is final
        throw new RangeError("discarded");
      }
      throw job.name === "a" ? new UnrecoverableError("card declined") : new BullUnrecoverable("gone");
    });
    w.on("failed", (job, err) => failedWith.push(`${job?.name}:${err.name}:${err.message}`));
    await assert.rejects(ours.waitUntilFinished(events), { message: "card declined" });
    await assert.rejects(theirs.waitUntilFinished(events), { message: "gone" });
    await assert.rejects(discarded.waitUntilFinished(events), { message: "discarded" });
    assert.equal((await q.getJob(discarded.id))?.attemptsMade, 1);
    // The Worker's failed event shows the processor's error, not the UnrecoverableError it became.
    assert.ok(failedWith.includes("c:RangeError:discarded"), failedWith.join());
    const read = await q.getJob(ours.id);
    assert.deepEqual(
      [runs, read?.attemptsMade, read?.failedReason, await read?.getState()],
      [3, 1, "card declined", "failed"],
    );
    // Already finished when asked: the row answers.
    await assert.rejects(read!.waitUntilFinished(events), { message: "card declined" });
  });

  test("a bad backoff is refused by name before anything is written; a flow's parent keeps its name through updateData", async (t) => {
    t.after(closeAll);
    const q = queue("bc-refuse");
    for (const [backoff, field] of [
      [{ type: "fixed", delay: 10, jitter: 0.5 }, "backoff.jitter"],
      [{ type: "exponential", delay: 1.5 }, "backoff"],
      [{ type: "custom" }, "backoff"],
      [{ type: "fixed", delayMs: 10 }, "backoff"],
    ] as const) {
      await assert.rejects(q.add("x", {}, { backoff: backoff as never }), (err: Error) => {
        assert.ok(err instanceof InvalidArgumentError, String(err));
        assert.match(err.message, new RegExp(field.replace(".", "\\.")));
        return true;
      });
    }
    assert.equal(await q.count(), 0);
    const flows = track(new FlowProducer({ connection: ctx().conn }));
    const tree = await flows.add({
      name: "parent",
      queueName: "bc-refuse",
      data: { p: 1 },
      children: [{ name: "child", queueName: "bc-refuse", data: { c: 1 }, opts: { backoff: 5 } }],
    });
    const child = tree.children![0]!.job;
    const core = new CoreQueue("bc-refuse", ctx().conn);
    assert.deepEqual(
      [(await core.getJob(child.id))?.name, (await core.getJob(child.id))?.backoff],
      ["child", { type: "fixed", delayMs: 5 }],
    );
    const names: string[] = [];
    worker("bc-refuse", async (job) => {
      names.push(`${job.name}:${JSON.stringify(job.data)}`);
      if (job.name === "parent") await job.updateData({ p: 2 });
      return 1;
    });
    await until("parent done", async () => (await q.getJob(tree.job.id))?.finishedOn !== undefined);
    assert.deepEqual(names, ['child:{"c":1}', 'parent:{"p":1}']);
    const parent = await q.getJob(tree.job.id);
    assert.deepEqual([parent?.name, parent?.data], ["parent", { p: 2 }]);
  });

  test("a flow's parent and a scheduler's jobs keep name and backoff on the core's rows, no envelope", async (t) => {
    t.after(closeAll);
    const flows = track(new FlowProducer({ connection: ctx().conn }));
    const tree = await flows.add({
      name: "assemble",
      queueName: "bc-rows",
      data: { p: 1 },
      opts: { attempts: 3, backoff: { type: "fixed", delay: 700 } },
      children: [{ name: "part", queueName: "bc-rows", data: { c: 1 } }],
    });
    const core = new CoreQueue("bc-rows", ctx().conn);
    const parent = await core.getJob(tree.job.id);
    assert.deepEqual(
      [parent?.name, parent?.payload.toString(), parent?.maxAttempts, parent?.backoff],
      ["assemble", '{"p":1}', 3, { type: "fixed", delayMs: 700 }],
    );
    const q = queue("bc-rows");
    const read = await q.getJob(tree.job.id);
    assert.deepEqual(
      [read?.name, read?.data, read?.opts.backoff],
      ["assemble", { p: 1 }, { type: "fixed", delay: 700 }],
    );
    await q.upsertJobScheduler(
      "sch",
      { every: 60_000 },
      { name: "tick", data: { t: 1 }, opts: { attempts: 2, backoff: 50 } },
    );
    await q.upsertJobScheduler("unnamed", { every: 60_000 }, { data: { u: 1 } });
    const records = await core.schedules();
    const sch = records.find((r) => r.name === "sch")!;
    assert.deepEqual(
      [sch.payload.toString(), sch.opts],
      [
        '{"t":1}',
        { priority: 0, maxAttempts: 2, timeoutMs: 0, name: "tick", backoff: { type: "fixed", delayMs: 50 } },
      ],
    );
    assert.equal(records.find((r) => r.name === "unnamed")?.opts.name, "unnamed"); // BullMQ: the id
    const schedulers = await q.getJobSchedulers();
    assert.deepEqual(
      schedulers.map((s) => [s.key, s.name, s.template]),
      [
        ["sch", "tick", { data: { t: 1 }, opts: { attempts: 2, backoff: { type: "fixed", delay: 50 } } }],
        ["unnamed", "unnamed", { data: { u: 1 }, opts: { attempts: 1 } }],
      ],
    );
    // the same upsert again leaves the record as it is (its count and next instant stand)
    const before = (await core.schedules()).find((r) => r.name === "sch")!.next;
    await q.upsertJobScheduler(
      "sch",
      { every: 60_000 },
      { name: "tick", data: { t: 1 }, opts: { attempts: 2, backoff: 50 } },
    );
    assert.equal((await core.schedules()).find((r) => r.name === "sch")!.next, before);
    for (const [call, argument] of [
      [() => q.upsertJobScheduler("bad", { every: 100 }, { name: "a\tb" }), "template.name"],
      [() => q.upsertJobScheduler("bad", { every: 100 }, { opts: { backoff: -1 } }), "backoff"],
      [
        () =>
          flows.add({
            name: "x".repeat(256),
            queueName: "bc-rows",
            children: [{ name: "c", queueName: "bc-rows" }],
          }),
        "flow.name",
      ],
    ] as [() => Promise<unknown>, string][]) {
      await assert.rejects(
        call(),
        (err: unknown) => err instanceof InvalidArgumentError && err.argument === argument,
      );
    }
    assert.equal(
      (await core.schedules()).some((r) => r.name === "bad"),
      false,
    );
  });

  test("rows and schedules an older release wrote with the envelope still read; its backoff still applies", async (t) => {
    t.after(closeAll);
    const core = new CoreQueue("bc-legacy", ctx().conn);
    // As an older echomq/bullmq wrote a flow's parent or a scheduler's job: no row name, an envelope.
    const legacy = await core.add(encodeEnvelope("olden", { x: 1 }, { type: "fixed", delay: 600_000 }), {
      maxAttempts: 2,
    });
    await core.schedule("old-sch", {
      everyMs: 60_000,
      payload: encodeEnvelope("nightly", { n: 1 }, 5),
      opts: { maxAttempts: 1 },
    });
    const q = queue("bc-legacy");
    const read = await q.getJob(legacy.id);
    assert.deepEqual(
      [read?.name, read?.data, read?.opts.backoff],
      ["olden", { x: 1 }, { type: "fixed", delay: 600_000 }],
    );
    const [sch] = await q.getJobSchedulers();
    assert.deepEqual(
      [sch?.name, sch?.template],
      ["nightly", { data: { n: 1 }, opts: { attempts: 1, backoff: 5 } }],
    );
    const seen: string[] = [];
    worker("bc-legacy", async (job) => {
      seen.push(`${job.name}:${JSON.stringify(job.data)}`);
      throw new Error("later");
    });
    await until(
      "the envelope's job waits for its retry",
      async () => (await core.getJob(legacy.id))?.state === "scheduled",
    );
    assert.deepEqual(seen, ['olden:{"x":1}']);
    const due = Number(await ctx().server.cli("ZSCORE", "emq:{bc-legacy}:schedule", legacy.id));
    const [secs] = (await ctx().server.cli("TIME")) as unknown as string[];
    assert.ok(
      due - Number(secs) * 1000 > 500_000,
      `the envelope's 10-minute backoff: due in ${due - Number(secs) * 1000} ms`,
    );
    // upserted again by this release: the record keeps the name, the payload is the data
    await q.upsertJobScheduler(
      "old-sch",
      { every: 60_000 },
      { name: "nightly", data: { n: 1 }, opts: { backoff: 5 } },
    );
    const [record] = await core.schedules();
    assert.deepEqual([record?.payload.toString(), record?.opts.name], ['{"n":1}', "nightly"]);
  });
});

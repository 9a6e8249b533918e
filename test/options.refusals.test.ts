/**
 * Options that are not options are refused, on both wires, before anything is sent: for every
 * public API a table of bad options → `InvalidArgumentError` naming the key and, for another
 * library's name, the EchoMQ one; the server holds no new key after each (`DBSIZE`). `setLimits`
 * with a key it does not take leaves the limits as they were; a cron of 7 fields or one that never
 * matches is refused saying so; `QueueEvents` refuses a stream id past 64 bits, and a dropped
 * connection reaches its `error` listener as an EchoMQ error.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { add, addBulk, enqueue } from "../src/protocol.js";
import {
  type Connection,
  connect,
  EchoMQError,
  FlowProducer,
  InvalidArgumentError,
  Queue,
  QueueEvents,
  Worker,
} from "../src/index.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

type Case = [label: string, call: (conn: Connection) => unknown, argument: string, says: string[]];

const q = (conn: Connection, name = "opts") => new Queue(name, conn);
const nothing = async () => {};

const CASES: Case[] = [
  [
    'Queue.add(payload, "str")',
    (c) => q(c).add("x", "str" as never),
    "options",
    ["must be an object, got string"],
  ],
  ["Queue.add(payload, 42)", (c) => q(c).add("x", 42 as never), "options", ["got number"]],
  ["Queue.add(payload, [1])", (c) => q(c).add("x", [1] as never), "options", ["got array"]],
  ["Queue.add(payload, true)", (c) => q(c).add("x", true as never), "options", ["got boolean"]],
  ["add { dealy }", (c) => q(c).add("x", { dealy: 5000 } as never), "dealy", ["did you mean delay?"]],
  ["add { attempts }", (c) => q(c).add("x", { attempts: 3 } as never), "attempts", ["use maxAttempts"]],
  ["add { jobId }", (c) => q(c).add("x", { jobId: "a" } as never), "jobId", ["use id", "or key"]],
  [
    "add { removeOnComplete }",
    (c) => q(c).add("x", { removeOnComplete: true } as never),
    "removeOnComplete",
    ["keepCompleted"],
  ],
  ["add { removeOnFail }", (c) => q(c).add("x", { removeOnFail: 10 } as never), "removeOnFail", ["keepDead"]],
  [
    "add { backoff: fn }",
    (c) => q(c).add("x", { backoff: () => 5 } as never),
    "backoff",
    ["a function cannot be", "the Worker's backoff"],
  ],
  [
    "add { backoff: { delay } }",
    (c) => q(c).add("x", { backoff: { type: "fixed", delay: 5 } } as never),
    "backoff.delay",
    ["use delayMs"],
  ],
  [
    "add { backoff: { type: 'linear' } }",
    (c) => q(c).add("x", { backoff: { type: "linear", delayMs: 5 } } as never),
    "backoff.type",
    ['must be "fixed" or "exponential", got "linear"'],
  ],
  ["add { name: '' }", (c) => q(c).add("x", { name: "" }), "name", ["must be 1 to 255 bytes"]],
  ["add { name: 5 }", (c) => q(c).add("x", { name: 5 } as never), "name", ["must be a string, got number"]],
  ["Queue.add(undefined)", (c) => q(c).add(undefined), "data", ["cannot be serialized", "undefined"]],
  [
    "Queue { serializer: 'msgpack' }",
    (c) => new Queue("opts", c, { serializer: "msgpack" as never }),
    "serializer",
    ['must be "json", "raw" or { serialize(data), deserialize(payload) }'],
  ],
  [
    "Worker { serializer: 5 }",
    (c) => new Worker(q(c), nothing, { serializer: 5 as never }),
    "serializer",
    ["must be a string or an object, got number"],
  ],
  ["add { repeat }", (c) => q(c).add("x", { repeat: { every: 5 } } as never), "repeat", ["queue.schedule"]],
  [
    "add { delay: '5' }",
    (c) => q(c).add("x", { delay: "5" } as never),
    "delay",
    ['must be a number, got string "5"'],
  ],
  ["add() { lifo }", (c) => add(c, "opts", "x", { lifo: true } as never), "lifo", ["priority"]],
  ["enqueue { jobId }", (c) => enqueue(c, "opts", "x", { jobId: "a" } as never), "jobId", ["use id"]],
  [
    "addBulk job { attempts }",
    (c) => q(c).addBulk([{ payload: "a" }, { payload: "b", opts: { attempts: 2 } as never }]),
    "jobs[1].attempts",
    ["use maxAttempts"],
  ],
  [
    "addBulk job { data }",
    (c) => addBulk(c, "opts", [{ data: "a" } as never]),
    "jobs[0].data",
    ["use payload"],
  ],
  [
    "addBulk options { durabilty }",
    (c) => addBulk(c, "opts", [], { durabilty: {} } as never),
    "durabilty",
    ["did you mean durability?"],
  ],
  [
    "new Queue { defaultJobOptions }",
    (c) => new Queue("opts", c, { defaultJobOptions: {} } as never),
    "defaultJobOptions",
    ["each add"],
  ],
  ["new Queue { lane }", (c) => new Queue("opts", c, { lane: 2 } as never), "lane", ["did you mean lanes?"]],
  [
    "new Worker { lockDuration }",
    (c) => new Worker(q(c), nothing, { lockDuration: 1000 } as never),
    "lockDuration",
    ["use leaseMs"],
  ],
  [
    "new Worker { maxAttempts }",
    (c) => new Worker(q(c), nothing, { maxAttempts: 3 } as never),
    "maxAttempts",
    ["use attempts"],
  ],
  [
    "new Worker { limiter }",
    (c) => new Worker(q(c), nothing, { limiter: { max: 1 } } as never),
    "limiter",
    ["setLimits"],
  ],
  [
    "Worker backoff { delay }",
    (c) => new Worker(q(c), nothing, { backoff: { type: "fixed", delay: 5 } } as never),
    "backoff.delay",
    ["use delayMs"],
  ],
  [
    "Worker batch { timeout }",
    (c) => new Worker(q(c), nothing, { batch: { size: 5, timeout: 100 } } as never),
    "batch.timeout",
    ["use maxWaitMs"],
  ],
  [
    "Worker batch { size: 0 }",
    (c) => new Worker(q(c), nothing, { batch: { size: 0 } }),
    "batch.size",
    ["must be an integer from 1 to 10000, got 0"],
  ],
  [
    "Worker batch { maxWaitMs } past the lease",
    (c) => new Worker(q(c), nothing, { leaseMs: 1000, batch: { size: 5, maxWaitMs: 1000 } }),
    "batch.maxWaitMs",
    ["under leaseMs (1000)", "hold their leases"],
  ],
  [
    "Worker batch with tracing",
    (c) => new Worker(q(c), nothing, { tracing: true, batch: { size: 5 } }),
    "batch",
    ["does not combine with tracing"],
  ],
  [
    "schedule { evryMs }",
    (c) => q(c).schedule("s", { evryMs: 1000, payload: "x" } as never),
    "evryMs",
    ["did you mean everyMs?"],
  ],
  [
    "schedule { pattern }",
    (c) => q(c).schedule("s", { pattern: "* * * * *", payload: "x" } as never),
    "pattern",
    ["use cron"],
  ],
  [
    "schedule opts { attempts }",
    (c) => q(c).schedule("s", { everyMs: 1000, payload: "x", opts: { attempts: 2 } } as never),
    "opts.attempts",
    ["use maxAttempts"],
  ],
  [
    "schedule: 7 cron fields",
    (c) => q(c).schedule("s", { cron: "0 0 0 1 1 * 2030", payload: "x" }),
    "cron",
    ["has 7 fields", "5 (minute hour day-of-month month day-of-week), or 6 with seconds first"],
  ],
  [
    "schedule: a cron that never matches",
    (c) => q(c).schedule("s", { cron: "0 0 30 2 *", payload: "x" }),
    "cron",
    ['"0 0 30 2 *" never matches'],
  ],
  [
    "setLimits { burst }",
    (c) => q(c).setLimits({ burst: 5 } as never),
    "limits.burst",
    ["it takes rate, concurrency, group"],
  ],
  [
    "setLimits rate { duration }",
    (c) => q(c).setLimits({ rate: { max: 5, duration: 1000 } } as never),
    "limits.rate.duration",
    ["use durationMs"],
  ],
  ["setLimits()", (c) => q(c).setLimits(undefined as never), "limits", ["{} clears them all"]],
  [
    "setGroupLimits { group }",
    (c) => q(c).setGroupLimits("g", { group: {} } as never),
    "limits.group",
    ["it takes rate, concurrency"],
  ],
  ["setEvents('x')", (c) => q(c).setEvents("x" as never), "options", ["must be an object, got string"]],
  ["setEvents { maxlen }", (c) => q(c).setEvents({ maxlen: 5 } as never), "maxlen", ["did you mean maxLen?"]],
  ["getJobs { start }", (c) => q(c).getJobs("pending", { start: 5 } as never), "start", ["use offset"]],
  ["clean { grace }", (c) => q(c).clean("dead", { grace: 5 } as never), "grace", ["use olderThanMs"]],
  [
    "obliterate { forse }",
    (c) => q(c).obliterate({ forse: true } as never),
    "forse",
    ["did you mean force?"],
  ],
  [
    "QueueEvents { blockingTimeout }",
    (c) => new QueueEvents("opts", c, { blockingTimeout: 5 } as never),
    "blockingTimeout",
    ["use blockMs"],
  ],
  [
    "QueueEvents lastEventId past 64 bits",
    (c) => new QueueEvents("opts", c, { lastEventId: "99999999999999999999-0" }),
    "lastEventId",
    ["each at most 2^64-1", "got 99999999999999999999-0"],
  ],
  [
    "QueueEvents lastEventId seq past 64 bits",
    (c) => new QueueEvents("opts", c, { lastEventId: "1-18446744073709551616" }),
    "lastEventId",
    ["each at most 2^64-1"],
  ],
  [
    "a flow leaf's opts { attempts }",
    (c) =>
      new FlowProducer(c).add({
        queue: "opts",
        payload: "p",
        children: [{ queue: "opts", payload: "c", opts: { attempts: 3 } as never }],
      }),
    "flow.children[0].opts.attempts",
    ["use maxAttempts"],
  ],
  [
    "a flow leaf's opts { dealy }",
    (c) => new FlowProducer(c).add({ queue: "opts", payload: "c", opts: { dealy: 5 } as never }),
    "flow.opts.dealy",
    ["did you mean delay?"],
  ],
  [
    "a flow parent's opts { failParentOnFailure }",
    (c) =>
      new FlowProducer(c).add({
        queue: "opts",
        payload: "p",
        opts: { failParentOnFailure: true } as never,
        children: [{ queue: "opts", payload: "c" }],
      }),
    "flow.opts.failParentOnFailure",
    ["onChildFailure"],
  ],
  [
    "a flow node { data }",
    (c) => new FlowProducer(c).add({ queue: "opts", data: "p" } as never),
    "flow.data",
    ["use payload"],
  ],
  [
    "a flow node { queueName }",
    (c) =>
      new FlowProducer(c).add({
        queue: "opts",
        payload: "p",
        children: [{ queueName: "opts", payload: "c" } as never],
      }),
    "flow.children[0].queueName",
    ["use queue"],
  ],
];

/** The keys of the server's database 0 (the wire-6 brand is one). */
async function dbsize(conn: Connection): Promise<number> {
  return Number(await conn.send("DBSIZE", []));
}

forEachWire("options that are not options are refused, nothing written", (ctx) => {
  for (const [label, call, argument, says] of CASES) {
    test(`${label} → InvalidArgumentError naming ${argument}`, async () => {
      const { conn } = ctx();
      const before = await dbsize(conn);
      await assert.rejects((async () => call(conn))(), (e: unknown) => {
        assert.ok(e instanceof InvalidArgumentError, String(e));
        assert.equal(e.argument, argument);
        for (const text of says) assert.ok(e.message.includes(text), `${e.message} says ${text}`);
        return true;
      });
      assert.equal(await dbsize(conn), before, "no key written");
    });
  }

  test("connect: a foreign or misspelled key is refused before any socket opens", async () => {
    const { port } = ctx().server;
    await assert.rejects(connect({ port, connectTimeout: 10 } as never), (e: unknown) => {
      return (
        e instanceof InvalidArgumentError &&
        e.argument === "connectTimeout" &&
        /use connectTimeoutMs/.test(e.message)
      );
    });
    await assert.rejects(connect({ prot: port } as never), (e: unknown) => {
      return (
        e instanceof InvalidArgumentError && e.argument === "prot" && /did you mean port\?/.test(e.message)
      );
    });
  });

  test("setLimits({ burst: 5 }) leaves the limits as they were", async () => {
    const queue = q(ctx().conn, "kept");
    const limits = { concurrency: 3, rate: { max: 10, durationMs: 1000 }, group: { concurrency: 1 } };
    await queue.setLimits(limits);
    await assert.rejects(queue.setLimits({ burst: 5 } as never), InvalidArgumentError);
    await assert.rejects(
      queue.setLimits({ ...limits, rate: { max: 5, durationMs: 10, burst: 2 } } as never),
      /limits\.rate\.burst/,
    );
    assert.deepEqual(await queue.limits(), { ...limits, groups: {} });
  });

  test("QueueEvents takes the largest stream id (each part 2^64-1)", async () => {
    const events = new QueueEvents("opts", ctx().conn, {
      lastEventId: "18446744073709551615-18446744073709551615",
    });
    const errors: unknown[] = [];
    events.on("error", (e) => errors.push(e));
    await events.ready;
    await events.close();
    assert.deepEqual(errors, []);
  });

  test("QueueEvents: a dropped connection reaches the error listener as an EchoMQ error", async () => {
    const { conn, server } = ctx();
    const events = new QueueEvents("opts-drop", conn, { blockMs: 60_000 });
    const errors: unknown[] = [];
    events.on("error", (e) => errors.push(e));
    await events.ready;
    // Let the reader block in its XREAD, then kill every client but the one asking.
    await until(
      "the reader blocks",
      async () => /cmd=xread/.test(String(await server.cli("CLIENT", "LIST"))),
      10_000,
    );
    await server.cli("CLIENT", "KILL", "TYPE", "normal");
    await until("an error reported", () => errors.length > 0, 10_000);
    await events.close();
    for (const e of errors)
      assert.ok(e instanceof EchoMQError, `${(e as Error).name}: ${(e as Error).message}`);
  });
});

test("a schedule record stored before the field check stays readable", async () => {
  const { checkSchedule, parseSpec } = await import("../src/schedules/options.js");
  const stored = JSON.stringify({ cron: "0 0 0 1 1 * *", missed: "skip", graceMs: 5000 });
  assert.equal(parseSpec(stored).cron, "0 0 0 1 1 * *");
  assert.throws(() => checkSchedule({ cron: "0 0 0 1 1 * *", payload: "x" }), /has 7 fields/);
});

/**
 * The Worker's reliability on both wires, against real servers: a worker killed with SIGKILL
 * mid-job loses nothing (at-least-once, re-runs only for the jobs it held), a stale worker can
 * change nothing, close() under load hands every unfinished job back, 50,000 jobs due in one
 * millisecond all run once, retention keeps memory flat over 200,000 jobs, and an idle worker
 * does not poll yet wakes at once for a new job.
 *
 * Every wait is a bounded poll for a condition; fixed sleeps only open measurement windows.
 * Measured numbers are reported with `t.diagnostic` (shown by the spec reporter).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Redis } from "iovalkey";
import {
  type Connection,
  connect,
  type Job,
  LeaseLostError,
  NativeOnlyVerbError,
  Queue,
  Worker,
} from "../src/index.js";
import { queueKey, reschedule, extend, fail, claim, complete, reap, requeue } from "../src/protocol.js";
import { LOG_KEY, loggingHandler, RUNS_KEY } from "./fixtures/log-handler.js";
import { startProxy } from "./support/proxy.js";
import type { ValkeyServer } from "./support/valkey.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CHILD_WORKER = fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url));

/* ------------------------------------------------------------------ helpers */

/** Polls `cond` every `everyMs` until it holds; fails naming `what` after `timeoutMs`. */
async function until(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 25,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await cond()) return Date.now() - start;
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(everyMs);
  }
}

/** `promise`, or a rejection naming `what` after `ms`. */
async function within<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function plainClient(port: number): Redis {
  const r = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 0 });
  r.on("error", () => {});
  return r;
}

/** Job rows of queue `q` by their `state` field (SCAN over `emq:{q}:job:*`). */
async function rowsByState(r: Redis, q: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `emq:{${q}}:job:*`, "COUNT", 5000);
    cursor = next;
    const states = await Promise.all(keys.map((k) => r.hget(k, "state")));
    for (const s of states) out[String(s)] = (out[String(s)] ?? 0) + 1;
  } while (cursor !== "0");
  return out;
}

/** How many job rows queue `q` has (SCAN count of `emq:{q}:job:*`). */
async function countRows(r: Redis, q: string): Promise<number> {
  let n = 0;
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `emq:{${q}}:job:*`, "COUNT", 10_000);
    cursor = next;
    n += keys.length;
  } while (cursor !== "0");
  return n;
}

function infoField(info: unknown, field: string): number {
  const m = new RegExp(`^${field}:(\\d+)`, "m").exec(String(info));
  if (!m) throw new Error(`INFO has no ${field}`);
  return Number(m[1]);
}

/** `cmdstat_<name>:calls=<n>` of INFO commandstats, as a map. */
function commandCalls(info: unknown): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of String(info).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

function noErrors(errors: readonly unknown[]): void {
  assert.equal(errors.length, 0, `unexpected: ${errors.map(String).join("; ")}`);
}

function sum(xs: Iterable<number>): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** How many of a worker's slots wait on its wake gate (test-only introspection). */
/** Slots waiting for work: on the wake gate, and (wire 6) the one waiting inside the server. */
function idleSlots(w: Worker): number {
  const worker = w as unknown as { gate: { waiting: number }; watchHeld: boolean };
  return worker.gate.waiting + (worker.watchHeld ? 1 : 0);
}

interface ChildWorker {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<void>;
  stderr(): string;
}

function spawnChildWorker(port: number, wire: number, queue: string): ChildWorker {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CHILD_WORKER, String(port), String(wire), queue],
    {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      if (String(d).includes("ready")) resolve();
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`child worker exited (code ${code}, signal ${signal}) before ready: ${stderr}`)),
    );
  });
  ready.catch(() => {});
  return { child, ready, exited, stderr: () => stderr };
}

/** Stops a worker and closes its connection, whatever state the test left them in. */
async function shut(w: Worker | undefined, conn: Connection | undefined): Promise<void> {
  await w?.close().catch(() => {});
  await conn?.close().catch(() => {});
}

async function serverNowMs(server: ValkeyServer): Promise<number> {
  const [s, us] = (await server.cli("TIME")) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/* ------------------------------------------------------------------ the suite */

forEachWire("worker reliability", (ctx) => {
  test("SIGKILL mid-job: every job runs to completion, re-runs only for the jobs the killed worker held", {
    timeout: 150_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 400;
    const q = "crash";
    const active = queueKey(q, "active");
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    const ids = (await queue.addBulk(Array.from({ length: N }, (_, i) => ({ payload: `job ${i}` })))).map(
      (x) => x.id,
    );
    assert.equal(new Set(ids).size, N);

    // 1. A worker in a child process runs until ≥ 100 jobs are logged and some are active: SIGKILL.
    const kid = spawnChildWorker(server.port, wire, q);
    let w: Worker | undefined;
    let wConn: Connection | undefined;
    const log = plainClient(server.port);
    try {
      await within("the child worker to be ready", kid.ready, 60_000);
      const t0 = Date.now();
      await until(
        "≥ 100 jobs logged and some active",
        async () => Number(await r.scard(LOG_KEY)) >= 100 && Number(await r.zcard(active)) > 0,
        60_000,
        5,
      );
      kid.child.kill("SIGKILL");
      await within("the child to exit", kid.exited, 10_000);
      const runFor = Date.now() - t0;
      // Commands the child wrote before dying are processed before the server drops its socket:
      // only once its connections are gone is the active set final.
      await until(
        "the server to drop the child's connections",
        async () => !/ name=emq-(child|wake-)/.test(String(await r.client("LIST"))),
        10_000,
      );
      const held = await r.zrange(active, 0, -1);
      const loggedAtKill = Number(await r.scard(LOG_KEY));
      const doneAtKill = Number(await r.zcard(queueKey(q, "done")));
      assert.ok(held.length > 0, "the killed worker held jobs");
      assert.ok(held.length <= 10, `the child (concurrency 10) held ${held.length} jobs`);

      // 2. A second worker, in-process, with the same handler: reaps the dead worker's leases.
      wConn = await conn.duplicate();
      w = new Worker(new Queue(q, wConn), loggingHandler(log), {
        concurrency: 10,
        leaseMs: 5000,
        reapEveryMs: 100,
        keepCompleted: 10_000,
      });
      const stalledRequeued: string[] = [];
      const stalledDead: string[] = [];
      const completedBySecond = new Set<string>();
      const errors: unknown[] = [];
      w.on("stalled", (requeued, dead) => {
        stalledRequeued.push(...requeued);
        stalledDead.push(...dead);
      });
      w.on("completed", (job) => completedBySecond.add(job.id));
      w.on("error", (err) => errors.push(err));
      w.on("leaseLost", (job) => errors.push(new Error(`second worker lost the lease of ${job.id}`)));
      const t1 = Date.now();
      await w.ready;
      await until("all jobs completed", async () => (await queue.counts()).completed === N, 90_000, 50);
      const recoverMs = Date.now() - t1;
      await w.close();

      // Every job of the run is in the log, as a set, exactly once.
      assert.equal(Number(await r.scard(LOG_KEY)), N);
      assert.deepEqual((await r.smembers(LOG_KEY)).sort(), [...ids].sort());
      // Every row is completed (keepCompleted ≥ N keeps them), nothing active, pending or dead.
      assert.deepEqual(await rowsByState(r, q), { completed: N });
      const counts = await queue.counts();
      assert.deepEqual(
        { pending: counts.pending, scheduled: counts.scheduled, active: counts.active, dead: counts.dead },
        { pending: 0, scheduled: 0, active: 0, dead: 0 },
      );
      // The jobs the killed worker held were reaped (the 'stalled' event names them) and completed
      // by the second worker on a later attempt.
      assert.deepEqual(stalledDead, []);
      assert.deepEqual([...stalledRequeued].sort(), [...held].sort(), "exactly the held jobs were reaped");
      for (const id of held) {
        assert.ok(completedBySecond.has(id), `held job ${id} completed by the second worker`);
        const row = await queue.getJob(id);
        assert.equal(row?.state, "completed");
        assert.ok(row.attempts >= 2, `held job ${id} ran again (attempts ${row.attempts})`);
      }
      // At-least-once: every job ran; more than once only if the killed worker held it.
      const runs = await r.hgetall(RUNS_KEY);
      assert.equal(Object.keys(runs).length, N);
      const heldSet = new Set(held);
      const rerun: string[] = [];
      for (const id of ids) {
        const n = Number(runs[id]);
        assert.ok(n >= 1, `job ${id} ran`);
        if (n > 1) rerun.push(id);
      }
      for (const id of rerun) assert.ok(heldSet.has(id), `job ${id} ran ${runs[id]} times but was not held`);
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: child ran ${runFor} ms, logged ${loggedAtKill} (done ${doneAtKill}) at SIGKILL, ` +
          `held ${held.length} (re-run ${rerun.length}); second worker finished ${completedBySecond.size} ` +
          `jobs in ${recoverMs} ms`,
      );
    } finally {
      if (kid.child.exitCode === null && kid.child.signalCode === null) kid.child.kill("SIGKILL");
      await shut(w, wConn);
      await log.quit().catch(() => log.disconnect());
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("a stale worker (lease reaped, job claimed elsewhere) can change nothing", {
    timeout: 60_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const q = "stale";
    const active = queueKey(q, "active");
    const { id } = await new Queue(q, conn).add("J");
    // Worker A reaches the server through a proxy that can hold its commands, so the test acts
    // behind its back without racing its heartbeat.
    const proxy = await startProxy({ targetPort: server.port });
    const aConn = await connect({ port: proxy.port, wire });
    const other = await conn.duplicate();
    let a: Worker | undefined;
    try {
      let releaseHandler!: () => void;
      const handlerGate = new Promise<void>((resolve) => {
        releaseHandler = resolve;
      });
      let started!: (job: Job) => void;
      const startedJob = new Promise<Job>((resolve) => {
        started = resolve;
      });
      let handlerReturned = false;
      a = new Worker(
        new Queue(q, aConn),
        async (job) => {
          started(job);
          await handlerGate;
          handlerReturned = true;
          return "late result";
        },
        { concurrency: 1, leaseMs: 300, reapEveryMs: 60_000, promoteEveryMs: 60_000, idleCheckMs: 60_000 },
      );
      const seen: string[] = [];
      for (const event of ["completed", "failed", "retrying", "dead", "stalled", "error"] as const) {
        a.on(event, () => seen.push(event));
      }
      const lost = new Promise<{ job: Job; err: unknown }>((resolve) =>
        a!.once("leaseLost", (job, err) => resolve({ job, err })),
      );
      await a.ready;
      const job = await within("A to start J", startedJob, 10_000);
      assert.equal(job.id, id);
      assert.equal(job.attempts, 1);

      // A's heartbeat renews the lease (every leaseMs / 3).
      const firstDeadline = Number(await conn.client.zscore(active, id));
      await until(
        "A's heartbeat to extend the lease",
        async () => Number(await conn.client.zscore(active, id)) > firstDeadline,
        5000,
        10,
      );

      // Behind A's back: expire the lease, reap it, claim it on another connection.
      proxy.hold();
      await server.cli("ZADD", active, "0", id);
      assert.deepEqual(await reap(other, q, { limit: 100, maxAttempts: 3, keep: 100 }), {
        requeued: [id],
        dead: [],
      });
      const mine = await claim(other, q, 60_000);
      assert.ok(mine);
      assert.equal(mine.id, id);
      assert.equal(mine.attempts, 2);
      const reclaimed = await dumpQueue(server, q);
      assert.equal((reclaimed[`emq:{${q}}:job:${id}`] as Record<string, string>).state, "active");

      // A's next extend is refused: leaseLost, its handler's signal aborts.
      proxy.release();
      const { job: lostJob, err } = await within("A's leaseLost", lost, 10_000);
      assert.equal(lostJob.id, id);
      assert.ok(err instanceof LeaseLostError, `leaseLost carries a LeaseLostError, got ${String(err)}`);
      assert.equal(err.reason, "stale token");
      assert.ok(job.signal.aborted);

      // Release A's handler: A must not complete, fail, extend or move the job.
      releaseHandler();
      await until("A's handler to return", () => handlerReturned, 5000, 5);
      await until("A to drop the job", () => a!.activeCount === 0, 5000, 5);
      await until("A's slot to idle", () => idleSlots(a!) === 1, 5000, 5);
      await aConn.send("PING", []); // anything A sent before is processed by now
      assert.deepEqual(await dumpQueue(server, q), reclaimed);
      assert.deepEqual(seen, []);
      const row = await new Queue(q, conn).getJob(id);
      assert.equal(row?.state, "active");
      assert.equal(row.attempts, 2);
      assert.equal(Number(await conn.client.zcard(queueKey(q, "done"))), 0);
      await a.close();
      assert.deepEqual(await dumpQueue(server, q), reclaimed, "A's close() hands nothing back");

      // Directly: every lease verb with the stale token 1 is refused and writes nothing.
      const stale: [string, () => Promise<unknown>][] = [
        ["complete", () => complete(other, q, id, 1, "x", 100)],
        ["fail", () => fail(other, q, id, 1, "boom", { backoffMs: 0, maxAttempts: 3, keep: 100 })],
        [
          "fail with backoff",
          () => fail(other, q, id, 1, "boom", { backoffMs: 5000, maxAttempts: 3, keep: 100 }),
        ],
        ["fail to dead", () => fail(other, q, id, 1, "boom", { backoffMs: 0, maxAttempts: 1, keep: 100 })],
        ["extend", () => extend(other, q, id, 1, 60_000)],
        ["requeue", () => requeue(other, q, id, 1, 3)],
      ];
      const nativeOnly: [string, () => Promise<unknown>][] = [
        ["reschedule", () => reschedule(other, q, id, 1, 5000)],
      ];
      if (wire === 6) stale.push(...nativeOnly);
      for (const [verb, call] of stale) {
        await assert.rejects(
          call(),
          (e: unknown) => e instanceof LeaseLostError && e.reason === "stale token",
          `${verb} with token 1`,
        );
        assert.deepEqual(await dumpQueue(server, q), reclaimed, `${verb} with token 1 wrote nothing`);
      }
      if (wire === 4) {
        for (const [verb, call] of nativeOnly) {
          await assert.rejects(call(), NativeOnlyVerbError, `${verb} on wire 4`);
          assert.deepEqual(await dumpQueue(server, q), reclaimed);
        }
      }
      // The holder of token 2 still completes it.
      await complete(other, q, id, 2, "ok", 100);
      assert.equal((await new Queue(q, conn).getJob(id))?.state, "completed");
      t.diagnostic(`wire ${wire}: A's extend refused with "${(err as Error).message}"`);
    } finally {
      await shut(a, aConn);
      await other.close();
      await proxy.close();
    }
  });

  test("close() under load loses no job; a new worker finishes the rest", { timeout: 150_000 }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 1500;
    const q = "close";
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    for (let i = 0; i < N; i += 500) {
      await queue.addBulk(Array.from({ length: Math.min(500, N - i) }, (_, j) => ({ payload: `c${i + j}` })));
    }
    const handler = async () => {
      await sleep(5 + Math.floor(Math.random() * 76));
    };
    const firstCompleted = new Set<string>();
    const afterClose: string[] = [];
    let closed = false;
    let w1: Worker | undefined;
    let w2: Worker | undefined;
    const c1 = await conn.duplicate();
    const c2 = await conn.duplicate();
    try {
      const errors: unknown[] = [];
      w1 = new Worker(
        new Queue(q, c1),
        async () => {
          if (closed) afterClose.push("handler");
          await handler();
        },
        // A short lease: the heartbeat (every leaseMs / 3 = 30 ms) fires during most handlers, and
        // so also while close() hands the unfinished ones back.
        { concurrency: 20, leaseMs: 90, closeGraceMs: 50, keepCompleted: 10_000 },
      );
      w1.on("completed", (job) => {
        if (closed) afterClose.push(`completed ${job.id}`);
        firstCompleted.add(job.id);
      });
      w1.on("error", (err) => errors.push(err));
      // A job handed back by close() is not a lost lease.
      w1.on("leaseLost", (job, err) => errors.push(`leaseLost ${job.id}: ${String(err)}`));
      for (const event of ["failed", "dead"] as const)
        w1.on(event, (job) => errors.push(`${event} ${job.id}`));
      await w1.ready;
      await until("some jobs completed", () => firstCompleted.size > 0, 30_000, 5);
      await sleep(300);
      const runningAtClose = w1.activeCount;
      const t0 = Date.now();
      await within("close()", w1.close(), 30_000);
      const closeMs = Date.now() - t0;
      closed = true;

      // After close: nothing active; every job pending, scheduled or completed; none dead.
      const states = await rowsByState(r, q);
      const counts = await queue.counts();
      assert.equal(counts.active, 0, `active set empty after close (rows: ${JSON.stringify(states)})`);
      assert.equal(states.active ?? 0, 0, "no row left active");
      assert.equal(counts.dead, 0);
      assert.equal((states.pending ?? 0) + (states.scheduled ?? 0) + (states.completed ?? 0), N);
      assert.equal(states.completed ?? 0, firstCompleted.size);
      assert.equal(counts.completed, firstCompleted.size);
      assert.ok((states.pending ?? 0) > 0, "jobs were left for the next worker");
      noErrors(errors);
      // The closed worker does nothing more, even after a while.
      const frozen = await dumpQueue(server, q);
      await sleep(200); // longer than w1's lease and heartbeat interval: a stray write would show
      assert.deepEqual(await dumpQueue(server, q), frozen, "the closed worker wrote nothing more");
      assert.deepEqual(afterClose, []);

      // A new worker finishes the rest.
      const secondCompleted = new Set<string>();
      w2 = new Worker(new Queue(q, c2), handler, {
        concurrency: 20,
        keepCompleted: 10_000,
        promoteEveryMs: 100,
      });
      w2.on("completed", (job) => secondCompleted.add(job.id));
      w2.on("error", (err) => errors.push(err));
      const t1 = Date.now();
      await w2.ready;
      await until("all N completed", async () => (await queue.counts()).completed === N, 90_000, 50);
      const restMs = Date.now() - t1;
      assert.deepEqual(await rowsByState(r, q), { completed: N });
      for (const id of secondCompleted) assert.ok(!firstCompleted.has(id), `job ${id} completed twice`);
      assert.equal(firstCompleted.size + secondCompleted.size, N);
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: ${firstCompleted.size} completed before close, ${runningAtClose} running at close(), ` +
          `close() took ${closeMs} ms, left pending ${states.pending ?? 0} / scheduled ${states.scheduled ?? 0}; ` +
          `second worker finished ${secondCompleted.size} in ${restMs} ms`,
      );
    } finally {
      await shut(w1, c1);
      await shut(w2, c2);
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("close() also hands back a job whose claim was still in flight (closeGraceMs 0)", {
    timeout: 60_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const q = "late-claim";
    const queue = new Queue(q, conn);
    // The worker reaches the server through a proxy that holds its commands: its claim is sent
    // but not answered until the test releases it, after close() has begun.
    const proxy = await startProxy({ targetPort: server.port });
    const wConn = await connect({ port: proxy.port, wire });
    let w: Worker | undefined;
    let releaseHandler!: () => void;
    const handlerGate = new Promise<void>((resolve) => {
      releaseHandler = resolve;
    });
    try {
      const started: string[] = [];
      const events: string[] = [];
      w = new Worker(
        new Queue(q, wConn),
        async (job) => {
          started.push(job.id);
          await handlerGate;
        },
        { concurrency: 1, closeGraceMs: 0, promoteEveryMs: 60_000, reapEveryMs: 60_000, idleCheckMs: 60_000 },
      );
      for (const event of ["completed", "failed", "leaseLost", "error"] as const)
        w.on(event, () => events.push(event));
      await w.ready;
      await until("the slot to idle", () => idleSlots(w!) === 1, 10_000, 5);

      proxy.hold();
      const { id } = await queue.add("late"); // its wake message reaches the worker: the slot claims
      await until("the worker's claim to be sent (and held)", () => proxy.heldBytes() > 0, 10_000, 2);
      const closing = w.close();
      await sleep(50); // let the 0 ms grace run out while the claim is unanswered
      proxy.release();
      await within("close()", closing, 10_000);

      // After close() the worker does nothing more: no late claim, and its handler (if it
      // started) finishing writes nothing.
      const frozen = await dumpQueue(server, q);
      releaseHandler();
      await sleep(100);
      assert.deepEqual(await dumpQueue(server, q), frozen, "the closed worker wrote nothing more");
      // The job the in-flight claim brought back was handed back: pending again, nothing active.
      assert.equal(Number(await conn.client.zcard(queueKey(q, "active"))), 0, "active set empty after close");
      const row = await queue.getJob(id);
      assert.equal(row?.state, "pending");
      assert.equal(row.attempts, 1, "the claim landed before close() resolved");
      assert.deepEqual(events, []);
      t.diagnostic(`wire ${wire}: handler started ${started.length} time(s) before the hand-back`);
    } finally {
      releaseHandler();
      await shut(w, wConn);
      await proxy.close();
    }
  });

  test("close() does not wait out its grace for a slot whose claim comes back empty", {
    timeout: 60_000,
  }, async (t) => {
    const { server, wire } = ctx();
    const q = "empty-claim";
    const proxy = await startProxy({ targetPort: server.port });
    const wConn = await connect({ port: proxy.port, wire });
    let w: Worker | undefined;
    try {
      // The wake channel's path (a wake releases a slot, which claims): no blocking claim on wire 6.
      w = new Worker(new Queue(q, wConn), () => {}, {
        concurrency: 1,
        closeGraceMs: 10_000,
        promoteEveryMs: 60_000,
        reapEveryMs: 60_000,
        idleCheckMs: 60_000,
        blockMs: 0,
      });
      await w.ready;
      await until("the slot to idle", () => idleSlots(w!) === 1, 10_000, 5);
      // A wake message on an empty queue: the slot claims, and the claim is held unanswered.
      proxy.hold();
      await server.cli("SPUBLISH", queueKey(q, "wake"), "1");
      await until("the worker's claim to be sent (and held)", () => proxy.heldBytes() > 0, 10_000, 2);
      const t0 = Date.now();
      const closing = w.close();
      await sleep(20); // close() has woken the idle slots by now; the claim is still unanswered
      proxy.release();
      await within("close()", closing, 20_000);
      const closeMs = Date.now() - t0;
      assert.ok(closeMs < 5000, `close() took ${closeMs} ms (grace 10000 ms): a slot went back to wait`);
      assert.equal(idleSlots(w), 0, "no slot waits on the gate after close()");
      t.diagnostic(`wire ${wire}: close() took ${closeMs} ms`);
    } finally {
      await shut(w, wConn);
      await proxy.close();
    }
  });

  test("50,000 delayed jobs due in the same millisecond all run exactly once", {
    timeout: 180_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 50_000;
    const q = "same-ms";
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    let w: Worker | undefined;
    const wConn = await conn.duplicate();
    try {
      const t0 = Date.now();
      for (let i = 0; i < N; i += 5000) {
        await queue.addBulk(
          Array.from({ length: 5000 }, (_, j) => ({ payload: `d${i + j}`, opts: { delay: 600_000 } })),
        );
      }
      const addMs = Date.now() - t0;
      assert.equal((await queue.counts()).scheduled, N);
      // Every member of the schedule to one due millisecond: server now + 300 ms.
      const [rewritten, due] = (await server.cli(
        "EVAL",
        "local t = redis.call('TIME') " +
          "local due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1]) " +
          "local ids = redis.call('ZRANGE', KEYS[1], 0, -1) " +
          "for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], string.format('%d', due), id) end " +
          "return { #ids, due }",
        1,
        queueKey(q, "schedule"),
        300,
      )) as [number, number];
      assert.equal(Number(rewritten), N);
      assert.equal(
        Number(await r.zcount(queueKey(q, "schedule"), due, due)),
        N,
        "all due at one millisecond",
      );

      const runs = new Map<string, number>();
      const completed = new Set<string>();
      let completions = 0;
      const errors: unknown[] = [];
      w = new Worker(
        new Queue(q, wConn),
        (job) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        },
        { concurrency: 50, promoteEveryMs: 100, keepCompleted: 0 },
      );
      w.on("completed", (job) => {
        completions += 1;
        completed.add(job.id);
      });
      w.on("error", (err) => errors.push(err));
      w.on("stalled", (requeued, dead) => errors.push(`stalled ${requeued.length}/${dead.length}`));
      const t1 = Date.now();
      await w.ready;
      await until("50,000 completions", () => completions >= N, 90_000, 50);
      const runMs = Date.now() - t1;
      const lastAfterDue = (await serverNowMs(server)) - Number(due);
      await until(
        "schedule, pending and active empty",
        async () => {
          const c = await queue.counts();
          return c.scheduled === 0 && c.pending === 0 && c.active === 0;
        },
        10_000,
      );
      await w.close();
      assert.equal(completed.size, N);
      assert.equal(completions, N, "no job completed twice");
      assert.equal(runs.size, N);
      assert.ok(
        [...runs.values()].every((n) => n === 1),
        "every handler ran exactly once",
      );
      assert.equal(await countRows(r, q), 0, "keepCompleted 0 deleted every row");
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: addBulk ${N} in ${addMs} ms; all run in ${runMs} ms after the worker started ` +
          `(${Math.round(N / (runMs / 1000))} jobs/s); the last completed ${lastAfterDue} ms after the due millisecond`,
      );
    } finally {
      await shut(w, wConn);
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("retention keeps memory flat: 200,000 jobs with keepCompleted 1000", {
    timeout: 290_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const N = 200_000;
    const CHUNK = 5000;
    const KEEP = 1000;
    const q = "retention";
    const queue = new Queue(q, conn);
    const r = plainClient(server.port);
    let w: Worker | undefined;
    const wConn = await conn.duplicate();
    try {
      let completions = 0;
      const errors: unknown[] = [];
      w = new Worker(new Queue(q, wConn), () => {}, { concurrency: 50, keepCompleted: KEEP });
      w.on("completed", () => {
        completions += 1;
      });
      w.on("error", (err) => errors.push(err));
      await w.ready;
      await r.memory("PURGE").catch(() => {});
      const before = infoField(await r.info("memory"), "used_memory");
      let peak = before;
      const t0 = Date.now();
      for (let i = 0; i < N; i += CHUNK) {
        await queue.addBulk(Array.from({ length: CHUNK }, (_, j) => ({ payload: `r${i + j}` })));
        // Keep the producer at most a few chunks ahead of the worker.
        await until(
          "the worker to catch up",
          async () => (await queue.counts()).pending < 4 * CHUNK,
          120_000,
          20,
        );
        peak = Math.max(peak, infoField(await r.info("memory"), "used_memory"));
      }
      await until("200,000 completions", () => completions >= N, 180_000, 50);
      const runMs = Date.now() - t0;
      await until(
        "pending and active empty",
        async () => {
          const c = await queue.counts();
          return c.pending === 0 && c.active === 0;
        },
        10_000,
      );
      await w.close();
      const rows = await countRows(r, q);
      const done = Number(await r.zcard(queueKey(q, "done")));
      await r.memory("PURGE").catch(() => {});
      const after = infoField(await r.info("memory"), "used_memory");
      assert.equal(completions, N);
      assert.ok(rows <= KEEP + 10, `job rows after: ${rows}`);
      assert.ok(done <= KEEP + 10, `done holds ${done}`);
      const BOUND = 2 * 1024 * 1024;
      assert.ok(
        after <= before + BOUND,
        `used_memory ${before} before, ${after} after (+${after - before} bytes, bound ${BOUND})`,
      );
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: ${N} jobs added and processed in ${runMs} ms (${Math.round(N / (runMs / 1000))} jobs/s); ` +
          `rows after ${rows}, done ${done}; used_memory before ${before}, peak ${peak}, after ${after} ` +
          `(+${after - before} bytes)`,
      );
    } finally {
      await shut(w, wConn);
      await r.quit().catch(() => r.disconnect());
    }
  });

  test("an idle worker does not busy-poll, and a new job wakes it at once", {
    timeout: 60_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const q = "idle";
    const queue = new Queue(q, conn);
    const CONCURRENCY = 50;
    const WINDOW_MS = 3000;
    let w: Worker | undefined;
    const wConn = await conn.duplicate();
    try {
      let ran: { id: string; at: number } | undefined;
      w = new Worker(
        new Queue(q, wConn),
        (job) => {
          ran ??= { id: job.id, at: Date.now() };
        },
        // The safety tick is a minute away: only a wake message can start a slot in this test.
        { concurrency: CONCURRENCY, idleCheckMs: 60_000 },
      );
      const errors: unknown[] = [];
      w.on("error", (err) => errors.push(err));
      const tStart = Date.now();
      await w.ready;
      // Each slot tried one claim at start, found nothing and now waits on the gate.
      await until("every slot to idle", () => idleSlots(w!) === CONCURRENCY, 10_000, 5);
      const settleMs = Date.now() - tStart;

      const stats0 = await server.cli("INFO", "commandstats");
      const total0 = infoField(await server.cli("INFO", "stats"), "total_commands_processed");
      await sleep(WINDOW_MS); // the measurement window
      const total1 = infoField(await server.cli("INFO", "stats"), "total_commands_processed");
      const stats1 = await server.cli("INFO", "commandstats");
      // A command is counted once it has run: total1 includes the INFO that read total0, and
      // nothing else of this test's (Lua scripts' own calls count too, on wire 4).
      const idleCommands = total1 - total0 - 1;
      const calls0 = commandCalls(stats0);
      const perCommand = [...commandCalls(stats1)]
        .map(([name, n]) => [name, n - (calls0.get(name) ?? 0)] as const)
        .filter(([name, n]) => n > 0 && name !== "info");
      const counted = sum(perCommand.map(([, n]) => n));
      assert.ok(idleCommands <= 25, `an idle worker sent ${idleCommands} commands in ${WINDOW_MS} ms`);
      assert.equal(idleSlots(w), CONCURRENCY, "no slot left the gate while idle");

      // A job added now runs promptly: the add publishes a wake message.
      const t0 = Date.now();
      const { id } = await queue.add("wake up");
      await until("the handler to run", () => ran !== undefined, 2000, 2);
      const latency = ran!.at - t0;
      assert.equal(ran!.id, id);
      assert.ok(latency <= 2000, `the handler ran ${latency} ms after add`);
      await until("the job to complete", async () => (await queue.counts()).completed === 1, 5000);
      const tClose = Date.now();
      await w.close();
      const closeMs = Date.now() - tClose;
      assert.ok(closeMs < 2000, `close() of an idle worker took ${closeMs} ms`);
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: ready and idle after ${settleMs} ms; idle ${CONCURRENCY} slots for ${WINDOW_MS} ms: ` +
          `${idleCommands} commands (${((idleCommands * 1000) / WINDOW_MS).toFixed(1)}/s; commandstats ` +
          `${JSON.stringify(Object.fromEntries(perCommand))} = ${counted}); wake-to-handler ${latency} ms; ` +
          `close() ${closeMs} ms`,
      );
    } finally {
      await shut(w, wConn);
    }
  });
});

/**
 * The worker's blocking claim (wire 6, module 0.4.0): an idle worker waits inside the server
 * (`EMQ.BCLAIM`, one per `blockMs`, no polling claims), a job added while it idles reaches the
 * handler at once, a burst after idling runs every job, `close()` ends the wait at once and loses
 * nothing, a node that turns replica ends the wait with a typed, transient `WaitInterruptedError`
 * and the worker recovers; on a cluster a wait on each shard is woken by an add there and a slot
 * move ends it with `MOVED`. Wire 4 keeps the wake channel.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { modulePath } from "../tools/module-path.js";
import {
  type Connection,
  ConnectionLostError,
  connect,
  Queue,
  Worker,
  type WorkerOptions,
} from "../src/index.js";
import {
  ClaimUnansweredError,
  ClaimWatchdogError,
  queueKey,
  slot,
  WaitInterruptedError,
} from "../src/protocol.js";
import { installModuleBrand } from "../src/admin.js";
import { parseModuleVersion } from "../src/engine/fence.js";
import { CLAIM_WATCHDOG_MS } from "../src/worker/claims.js";
import { WATCHDOG_GRACE_MS } from "../src/worker/watcher.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { queuePerShard } from "./support/cluster-helpers.js";
import { claimKeys, enqueueArgs, refusalOf, WIRE6 } from "./support/module.js";
import { startProxy } from "./support/proxy.js";
import { connectResp } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { until } from "./support/until.js";

/** `cmdstat_<name>` calls, from `INFO commandstats`. */
async function calls(server: { cli: ValkeyServer["cli"] }): Promise<Record<string, number>> {
  const text = String(await server.cli("INFO", "commandstats"));
  const out: Record<string, number> = {};
  for (const [, name, n] of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[name!] = Number(n);
  return out;
}

function delta(before: Record<string, number>, now: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of Object.entries(now))
    if (n !== (before[name] ?? 0)) out[name] = n - (before[name] ?? 0);
  return out;
}

/** The commands `server` runs over `ms` while `worker` idles (after it settled 400 ms); closes it. */
async function idleCalls(server: ValkeyServer, worker: Worker, ms: number): Promise<Record<string, number>> {
  await worker.ready;
  await sleep(400);
  const start = await calls(server);
  await sleep(ms);
  const idle = delta(start, await calls(server));
  await worker.close();
  return idle;
}

/** Waits until the server has `n` blocked clients (a wait is in the server). */
async function untilBlocked(server: ValkeyServer, n: number, ms = 5000): Promise<void> {
  const blocked = new RegExp(`blocked_clients:${n}\\b`);
  await until(
    `${n} blocked clients`,
    async () => blocked.test(String(await server.cli("INFO", "clients"))),
    ms,
    5,
  );
}

/** Quiet timers: the host's promote and reap loops stay out of the counts. */
const QUIET: WorkerOptions = { promoteEveryMs: 600_000, reapEveryMs: 600_000, idleCheckMs: 100 };

describe("EMQ.VERSION's extensions", () => {
  test("parsed beside the verbs; a module before 0.4.0 offers none", () => {
    const verbs = ["ENQUEUE", "CLAIM"];
    const now = ["wire", WIRE6, "module", "0.4.0", "verbs", verbs, "extensions", ["BCLAIM"]];
    assert.deepEqual(parseModuleVersion(now)?.extensions, ["BCLAIM"]);
    assert.deepEqual(parseModuleVersion(now.slice(0, 6))?.extensions, []);
  });
});

describe("a wire-6 worker waits inside the server", () => {
  let server: ValkeyServer;
  let conn: Connection;
  before(async () => {
    server = await startValkey({ module: modulePath() });
    await installModuleBrand({ port: server.port });
    conn = await connect({ port: server.port, wire: 6 });
  });
  after(async () => {
    await conn.close();
    await server.stop();
  });

  test("idle: one EMQ.BCLAIM per blockMs, no claim, no safety tick", async () => {
    const queue = new Queue("idle", conn);
    const worker = new Worker(queue, async () => {}, { ...QUIET, concurrency: 4, blockMs: 300 });
    const idle = await idleCalls(server, worker, 1500);
    assert.equal(idle["emq.claim"] ?? 0, 0, JSON.stringify(idle));
    assert.ok((idle["emq.bclaim"] ?? 0) >= 3 && (idle["emq.bclaim"] ?? 0) <= 7, JSON.stringify(idle));
    const others = Object.keys(idle).filter((name) => !["emq.bclaim", "info"].includes(name));
    assert.deepEqual(others, [], "nothing else is sent");
  });

  test("a job added while the worker idles reaches its handler at once", async () => {
    const queue = new Queue("soon", conn);
    const seen: number[] = [];
    const worker = new Worker(queue, async () => void seen.push(Date.now()), { ...QUIET, concurrency: 2 });
    await worker.ready;
    await sleep(200);
    for (let i = 0; i < 5; i++) {
      const added = Date.now();
      await queue.add(`job ${i}`);
      await until(`job ${i}`, () => seen.length === i + 1, 2000);
      assert.ok(seen[i]! - added < 100, `job ${i} waited ${seen[i]! - added} ms`);
      await sleep(50);
    }
    await worker.close();
  });

  test("idle, then a burst: every job runs, once", async () => {
    const queue = new Queue("burst", conn);
    const ran = new Map<string, number>();
    const worker = new Worker(
      queue,
      async (job) => {
        ran.set(job.id, (ran.get(job.id) ?? 0) + 1);
        await sleep(1);
      },
      { ...QUIET, concurrency: 8 },
    );
    await worker.ready;
    await sleep(300);
    const ids: string[] = [];
    for (let i = 0; i < 400; i++) ids.push((await queue.add(`b${i}`)).id);
    await until("every job", () => ran.size === ids.length, 10_000);
    await worker.close();
    assert.deepEqual(
      [...ran.values()].filter((n) => n !== 1),
      [],
    );
    assert.equal(await server.cli("ZCARD", queueKey("burst", "done")), 400);
  });

  test("close() ends the wait at once and loses nothing", async () => {
    const queue = new Queue("closing", conn);
    const worker = new Worker(queue, async () => {}, { ...QUIET, blockMs: 30_000 });
    await worker.ready;
    await sleep(200);
    assert.match(String(await server.cli("INFO", "clients")), /blocked_clients:1/);
    const started = Date.now();
    await worker.close();
    assert.ok(Date.now() - started < 1500, `close took ${Date.now() - started} ms`);
    assert.match(String(await server.cli("INFO", "clients")), /blocked_clients:0/);
    await queue.add("after");
    assert.equal(await server.cli("ZCARD", queueKey("closing", "pending")), 1);
  });

  test("a wire-6 worker with blockMs 0 keeps the safety tick (as on wire 4)", async () => {
    const queue = new Queue("ticking", conn);
    const worker = new Worker(queue, async () => {}, { ...QUIET, blockMs: 0, idleCheckMs: 100 });
    const idle = await idleCalls(server, worker, 600);
    assert.equal(idle["emq.bclaim"] ?? 0, 0);
    // The safety tick's claims: a worker's claims are EMQ.CLAIMN (its idle slots in one call).
    assert.ok((idle["emq.claim"] ?? 0) + (idle["emq.claimn"] ?? 0) >= 3, JSON.stringify(idle));
  });
});

describe("nothing hangs the waiting slot", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ module: modulePath() });
    await installModuleBrand({ port: server.port });
  });
  after(() => server.stop());

  test("a wait cut by a reconnect is sent again; one never answered is dropped by the watchdog", async () => {
    const proxy = await startProxy({ targetPort: server.port });
    const conn = await connect({ port: proxy.port, wire: 6 });
    const direct = await connect({ port: server.port, wire: 6 });
    const errors: unknown[] = [];
    const done: string[] = [];
    // A short lease and a quick reaper: a job the server hands to a wait whose socket is lost
    // (the proxy forwards the held wait once released) comes back when that lease expires.
    const worker = new Worker(new Queue("hang", conn), async (job) => void done.push(job.id), {
      ...QUIET,
      blockMs: 300,
      leaseMs: 500,
      reapEveryMs: 200,
    });
    worker.on("error", (err) => errors.push(err));
    try {
      await worker.ready;
      await sleep(200);
      const producer = new Queue("hang", direct);

      proxy.cut(); // every socket, the waiting one too: the wait fails as lost, and is sent again
      await sleep(300);
      const first = (await producer.add("after the cut")).id;
      await until("the job after the cut", () => done.includes(first), 5000);
      // The slot runs that job, then claims once on the worker's own connection (empty) before it
      // waits in the server again. Hold only once it waits there: held earlier, the hold would
      // catch that claim (and the job's complete) instead of the wait this test is about.
      await untilBlocked(server, 1);

      proxy.hold(); // from now the next wait reaches no server: nothing answers it
      await until(
        "the watchdog",
        () => errors.some((e) => e instanceof ClaimWatchdogError),
        300 + WATCHDOG_GRACE_MS + 3000,
      );
      proxy.release();
      const second = (await producer.add("after the watchdog")).id;
      await until("the job after the watchdog", () => done.includes(second), 8000);
      assert.ok(
        errors.some((e) => e instanceof ConnectionLostError),
        "the cut wait was lost",
      );
      assert.equal(worker.transientErrors, errors.length, "every error passed with time");
    } finally {
      await worker.close();
      await conn.close();
      await direct.close();
      await proxy.close();
    }
  });
});

describe("nothing hangs a slot's claim on the worker's connection", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ module: modulePath() });
    await installModuleBrand({ port: server.port });
  });
  after(() => server.stop());

  // `blockMs: 0`: no wait in the server, the slot claims on the worker's connection (safety tick).
  const TICKING: WorkerOptions = { ...QUIET, blockMs: 0 };

  test("a claim never answered is abandoned; the job its late reply brings is handed back", async () => {
    const proxy = await startProxy({ targetPort: server.port });
    const conn = await connect({ port: proxy.port, wire: 6 });
    const direct = await connect({ port: server.port, wire: 6 });
    const errors: unknown[] = [];
    const runs: string[] = [];
    const worker = new Worker(new Queue("unanswered", conn), async (job) => void runs.push(job.id), TICKING);
    worker.on("error", (err) => errors.push(err));
    try {
      await worker.ready;
      await sleep(200);
      proxy.hold(); // the next claim reaches no server: nothing answers it
      const { id } = await new Queue("unanswered", direct).add("held");
      await until(
        "the claim's bound",
        () => errors.some((e) => e instanceof ClaimUnansweredError),
        CLAIM_WATCHDOG_MS + 3000,
      );
      const start = await calls(server);
      proxy.release(); // the abandoned claim reaches the server now and leases the job: handed back
      await until("the job", () => runs.includes(id), 5000);
      assert.ok((delta(start, await calls(server))["emq.requeue"] ?? 0) >= 1, "handed back");
      await sleep(200);
      assert.deepEqual(runs, [id], "run once");
      assert.equal(worker.transientErrors, errors.length, "every error passed with time");
    } finally {
      await worker.close();
      await conn.close();
      await direct.close();
      await proxy.close();
    }
  });

  test("close() while a claim is held waits on it no longer than its bound", async () => {
    const proxy = await startProxy({ targetPort: server.port });
    const conn = await connect({ port: proxy.port, wire: 6 });
    const worker = new Worker(new Queue("closing-held", conn), async () => {}, TICKING);
    worker.on("error", () => {});
    try {
      await worker.ready;
      await sleep(200);
      proxy.hold();
      await sleep(300); // a safety-tick claim is held now
      const started = Date.now();
      const ended = await Promise.race([
        worker.close().then(() => "closed"),
        sleep(CLAIM_WATCHDOG_MS + 4000).then(() => "still waiting"),
      ]);
      assert.equal(ended, "closed", `after ${Date.now() - started} ms`);
    } finally {
      proxy.release();
      await conn.close();
      await proxy.close();
    }
  });
  test("close() while a completion is held waits on it no longer than its bound; the job is not lost", async () => {
    const proxy = await startProxy({ targetPort: server.port });
    const conn = await connect({ port: proxy.port, wire: 6 });
    const direct = await connect({ port: server.port, wire: 6 });
    let release: () => void = () => {};
    const handlerMayEnd = new Promise<void>((r) => {
      release = r;
    });
    let started = false;
    const worker = new Worker(
      new Queue("closing-settle", conn),
      async () => {
        started = true;
        await handlerMayEnd;
      },
      { ...TICKING, leaseMs: 3000 },
    );
    worker.on("error", () => {});
    try {
      await worker.ready;
      const { id } = await new Queue("closing-settle", direct).add("one");
      await until("the handler", () => started, 5000);
      proxy.hold(); // the completion, the hand-back and every claim from now reach no server
      release();
      await sleep(200);
      const begun = Date.now();
      const ended = await Promise.race([
        worker.close().then(() => "closed"),
        sleep(3 * CLAIM_WATCHDOG_MS + 4000).then(() => "still waiting"),
      ]);
      assert.equal(ended, "closed", `after ${Date.now() - begun} ms`);
      // Nothing answered: the job is still leased on the server, and its lease ends in time.
      const q = new Queue("closing-settle", direct);
      await until(
        "the lease to end and the node's reaper to take the job back",
        async () => (await q.getJob(id))?.state !== "active",
        20_000,
        50,
      );
      assert.equal((await q.getJob(id))?.state, "pending", "the job is not lost");
    } finally {
      proxy.release();
      await conn.close();
      await direct.close();
      await proxy.close();
    }
  });
});

describe("a wire-6 worker through a failover", () => {
  test("UNBLOCKED is a typed, transient error: the worker recovers", async () => {
    const node = await startValkey({ module: modulePath() });
    const other = await startValkey({ module: modulePath() });
    await installModuleBrand({ port: node.port });
    await installModuleBrand({ port: other.port });
    const conn = await connect({ port: node.port, wire: 6 });
    const errors: unknown[] = [];
    try {
      const queue = new Queue("fo", conn);
      const done: string[] = [];
      const worker = new Worker(queue, async (job) => void done.push(job.id), { ...QUIET, blockMs: 5000 });
      worker.on("error", (err) => errors.push(err));
      await worker.ready;
      await sleep(200);
      await node.cli("REPLICAOF", other.host, String(other.port));
      await until("UNBLOCKED", () => errors.some((e) => e instanceof WaitInterruptedError), 5000);
      const interrupted = errors.find((e) => e instanceof WaitInterruptedError) as WaitInterruptedError;
      assert.equal(interrupted.reason, "unblocked");
      assert.equal(interrupted.code, "EMQ_WAIT_INTERRUPTED");
      await sleep(300);
      await node.cli("REPLICAOF", "NO", "ONE");
      const { id } = await queue.add("after the failover");
      await until("the job after the failover", () => done.includes(id), 8000);
      await worker.close();
      assert.equal(worker.transientErrors, errors.length);
    } finally {
      await conn.close();
      await node.stop();
      await other.stop();
    }
  });
});

describe("the blocking claim on a cluster", () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await startCluster({ primaries: 3, module: modulePath() });
    assert.equal(await installModuleBrand({ nodes: cluster.seeds }), 1);
  });
  after(async () => {
    await cluster?.stop();
  });

  test("a wait on each shard is woken by an add there; a worker on each shard runs its jobs", async () => {
    const names = queuePerShard(cluster, "bw-");
    const primaries = cluster.primaries();
    await Promise.all(
      names.map(async (q, i) => {
        const node = primaries[i]!;
        const [waiter, adder] = [await connectResp(node.port), await connectResp(node.port)];
        const wait = waiter.send(["EMQ.BCLAIM", 3, ...claimKeys(q), 30000, 5000]);
        await sleep(50);
        assert.equal(await adder.send(enqueueArgs(q, "JOB00000000001")), 1);
        const reply = await wait;
        assert.ok(Array.isArray(reply) && String(reply[0]) === "JOB00000000001", `${q}: ${String(reply)}`);
        await waiter.close();
        await adder.close();
      }),
    );
    const conn = await connect({ nodes: cluster.seeds, wire: 6 });
    try {
      const done: string[] = [];
      const queues = queuePerShard(cluster, "bwk-").map((q) => new Queue(q, conn));
      const workers = queues.map((queue) => new Worker(queue, async (job) => void done.push(job.id), QUIET));
      await Promise.all(workers.map((w) => w.ready));
      await sleep(200);
      const ids = await Promise.all(queues.map(async (queue) => (await queue.add("x")).id));
      await until("a job on each shard", () => ids.every((id) => done.includes(id)), 5000);
      await Promise.all(workers.map((w) => w.close()));
    } finally {
      await conn.close();
    }
  });

  test("a slot moved away ends the wait with MOVED", async () => {
    const [from, to] = cluster.primaries();
    const [q] = queuePerShard(cluster, "mv-");
    const waiter = await connectResp(from!.port);
    const wait = waiter.send(["EMQ.BCLAIM", 3, ...claimKeys(q!), 30000, 20000]);
    await sleep(50);
    await cluster.moveSlot(slot(queueKey(q!, "")), to!);
    const reply = await wait;
    assert.match(refusalOf(reply), new RegExp(`^MOVED ${slot(queueKey(q!, ""))} `));
    await waiter.close();
  });
});

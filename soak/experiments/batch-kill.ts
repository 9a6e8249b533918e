/**
 * Batch kill: a worker process (`test/fixtures/hold-process.ts`) holding many leases at once is
 * SIGKILLed, `kills` times per form: `batch` (two batch slots of `batchSize` jobs, each batch one
 * `CLAIMN`) and `wide` (`slots` slots of one job, claimed in batches). Its handler never returns,
 * so at the kill it holds every job it received. A survivor Worker in this process, started once
 * the child holds its jobs (one per round), drains the rest of the queue meanwhile, waits out a
 * lease (the child's heartbeat keeps its jobs) and is idle when the kill comes; then it must take
 * back every held job — reaped once its lease ends — and complete it.
 *
 * Each round's held jobs are what `active` holds once the server has dropped the child's
 * connections (every job the child reported, and any whose claim reply it never read).
 * Targets: every job completes once on the server (0 lost, 0 stuck); the survivor runs every job
 * exactly once, and never a held job before the kill (the child's heartbeat kept its leases);
 * the only jobs run twice are the held ones (the child's run, then the survivor's; `breaches`
 * counts the others); and every held job is back within its lease plus the reaper's period and
 * a margin. Figures: the jobs held per kill, and how long after the kill the survivor started
 * them, against the lease.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { type Connection, connect, Queue, type Wire, Worker } from "../../src/index.js";
import { queueOn } from "../../test/support/cluster-helpers.js";
import type { ValkeyServer } from "../../test/support/valkey.js";
import { clusterFor } from "./cluster-load.js";
import { queueKey } from "../../src/protocol.js";
import {
  brief,
  checkTargets,
  connectTo,
  crashedAmong,
  crashedOnItsOwn,
  measure,
  msRange,
  type Outcome,
  quietly,
  startFor,
  Tally,
  waitFor,
  whereAre,
  within,
} from "./common.js";

interface BatchKillParams {
  /** Kills per form (batch, wide). */
  kills: number;
  /** Jobs per batch of the `batch` child (two batch slots). */
  batchSize: number;
  /** Slots of the `wide` child. */
  slots: number;
  /** Jobs beyond the held ones, per kill, that the survivor drains while the child holds its own. */
  extra: number;
  /** The child's lease (ms). */
  leaseMs: number;
  /** Margin over lease + reaper period before a held job counts as late (ms). */
  marginMs: number;
}

export const batchKillDefaults = {
  soak: { kills: 3, batchSize: 50, slots: 100, extra: 1000, leaseMs: 5000, marginMs: 5000 },
  suite: { kills: 1, batchSize: 50, slots: 100, extra: 200, leaseMs: 2000, marginMs: 5000 },
} satisfies Record<string, BatchKillParams>;

const REAP_EVERY_MS = 100;
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../../test/fixtures/hold-process.ts", import.meta.url));

interface Child {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<void>;
  held: Set<string>;
}

function spawnChild(
  target: string,
  wire: Wire,
  queue: string,
  mode: "batch" | "wide",
  n: number,
  leaseMs: number,
): Child {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CHILD, target, String(wire), queue, mode, String(n), String(leaseMs)],
    { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  const held = new Set<string>();
  let line = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      line += String(d);
      const lines = line.split("\n");
      line = lines.pop() ?? "";
      for (const l of lines) {
        if (l === "ready") resolve();
        else if (l.startsWith("held ")) held.add(l.slice(5));
      }
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`child worker exited (${code ?? signal}) before ready: ${stderr}`)),
    );
  });
  ready.catch(() => {});
  return { child, ready, exited, held };
}

/** The ids of the server's client connections now. */
async function clientIds(cli: (...args: string[]) => Promise<unknown>): Promise<Set<string>> {
  const list = String(await cli("CLIENT", "LIST"));
  return new Set([...list.matchAll(/^id=(\d+) /gm)].map((m) => m[1]!));
}

/** Where the experiment runs: a node, or a cluster (the queue on one primary's shard). */
interface Env {
  queue: string;
  conn: Connection;
  /** The child's first argument: the node's port, or the cluster's seeds as JSON. */
  target: string;
  /** The node that holds the queue (its `CLIENT LIST` shows the child's connections). */
  node: ValkeyServer;
  crashes(): Promise<number>;
}

export function batchKill(wire: Wire, p: BatchKillParams): Promise<Outcome> {
  return measure("batch kill", wire, { ...p }, async (out) => {
    const server = await startFor(wire);
    let conn: Connection | undefined;
    try {
      conn = await connectTo(server.port, wire, "emq-direct");
      await killRun(out, wire, p, {
        queue: "bkill",
        conn,
        target: String(server.port),
        node: server,
        crashes: () => crashedOnItsOwn(server),
      });
    } finally {
      await quietly(conn?.close());
      await server.stop();
    }
  });
}

/** The same on a local cluster of three primaries, the queue on the first one's shard. */
export function batchKillCluster(wire: Wire, p: BatchKillParams): Promise<Outcome> {
  return measure("batch kill (cluster)", wire, { ...p }, async (out) => {
    const cluster = await clusterFor(wire, {});
    let conn: Connection | undefined;
    try {
      conn = await connect({ nodes: cluster.seeds, wire, name: "emq-direct" });
      const home = cluster.primaries()[0]!;
      await killRun(out, wire, p, {
        queue: queueOn(home, "bkill-"),
        conn,
        target: JSON.stringify(cluster.seeds),
        node: home,
        crashes: () => crashedAmong(cluster.nodes),
      });
    } finally {
      await quietly(conn?.close());
      await cluster.stop();
    }
  });
}

async function killRun(out: Outcome, wire: Wire, p: BatchKillParams, env: Env): Promise<void> {
  const { conn, node: server } = env;
  const Q = env.queue;
  let survivorConn: Connection | undefined;
  let survivor: Worker | undefined;
  let child: Child | undefined;
  try {
    const queue = new Queue(Q, conn);
    const ids: string[] = [];
    /** Survivor runs: start times per id. */
    const starts = new Map<string, number[]>();
    /** The held jobs of every kill, and when their child was killed. */
    const heldAt = new Map<string, number>();
    const heldPerKill: string[] = [];
    const reclaim = new Map<string, number[]>();
    const leftAtKill: number[] = [];
    /** Per held job: how long after its lease ended the survivor started it (ms). */
    const lag: number[] = [];
    let early = 0;
    let late = 0;
    const errors = new Tally();
    survivorConn = await conn.duplicate({ name: "emq-survivor" });
    let next = 0;
    for (const mode of ["batch", "wide"] as const) {
      const held = mode === "batch" ? 2 * p.batchSize : p.slots;
      for (let k = 1; k <= p.kills; k++) {
        const added = await queue.addBulk(
          Array.from({ length: held + p.extra }, () => ({ payload: `b${next++}` })),
        );
        for (const a of added) ids.push(a.id);
        const before = await clientIds(server.cli.bind(server));
        child = spawnChild(env.target, wire, Q, mode, mode === "batch" ? p.batchSize : p.slots, p.leaseMs);
        await within("the child worker to be ready", child.ready, 60_000);
        const c = child;
        if (!(await waitFor(() => c.held.size >= held, 30_000, 10)))
          throw new Error(`the ${mode} child held ${c.held.size} of ${held} jobs after 30 s`);
        const childIds = [...(await clientIds(server.cli.bind(server)))].filter((id) => !before.has(id));
        // A survivor (one per round) drains the rest while the child holds its jobs (renewing their leases).
        survivor = startSurvivor(survivorConn, Q, starts, errors);
        await survivor.ready;
        const drained = await waitFor(
          async () => {
            const n = await queue.counts();
            return n.pending + n.scheduled === 0 && survivor!.activeCount === 0;
          },
          60_000,
          20,
        );
        if (!drained) throw new Error(`the survivor did not drain the ${p.extra} other jobs in 60 s`);
        // Wait out more than a lease: the child's heartbeat must keep every held job its own.
        await sleep(p.leaseMs + 500);
        c.child.kill("SIGKILL");
        const killAt = Date.now();
        await within("the child to exit", c.exited, 10_000);
        child = undefined;
        const gone = await waitFor(async () => {
          const now = await clientIds(server.cli.bind(server));
          return childIds.every((id) => !now.has(id));
        }, 10_000);
        if (!gone) throw new Error("the server kept the killed child's connections for 10 s");
        const active = (await conn.send("ZRANGE", [queueKey(Q, "active"), 0, -1, "WITHSCORES"])) as Buffer[];
        const [sec, micro] = (await conn.send("TIME", [], queueKey(Q, ""))) as Buffer[];
        const serverNow = Number(String(sec)) * 1000 + Math.floor(Number(String(micro)) / 1000);
        const heldNow: string[] = [];
        const leftOf = new Map<string, number>();
        for (let i = 0; i < active.length; i += 2) {
          heldNow.push(String(active[i]));
          // The lease left at the kill (the deadline, server time, less the time the kill took to read).
          const left = Number(String(active[i + 1])) - serverNow + (Date.now() - killAt);
          leftOf.set(String(active[i]), left);
          leftAtKill.push(left);
        }
        for (const id of c.held)
          if (!heldNow.includes(id)) out.notes.push(`job ${id} reported held, not active at the kill`);
        for (const id of heldNow) heldAt.set(id, killAt);
        heldPerKill.push(
          `${mode} ${heldNow.length}${heldNow.length === c.held.size ? "" : ` (reported ${c.held.size})`}`,
        );
        // Every held job back and run by the survivor.
        const back = await waitFor(() => heldNow.every((id) => starts.has(id)), p.leaseMs * 3 + 30_000, 20);
        if (!back) {
          const missing = heldNow.filter((id) => !starts.has(id)).length;
          out.failures.push(`${mode} kill ${k}: ${missing} held jobs not run by the survivor`);
        }
        const times: number[] = [];
        for (const id of heldNow) {
          const first = starts.get(id)?.[0];
          if (first === undefined) continue;
          if (first < killAt) early += 1;
          else {
            times.push(first - killAt);
            lag.push(first - killAt - leftOf.get(id)!);
          }
          if (first - killAt > p.leaseMs + REAP_EVERY_MS + p.marginMs) late += 1;
        }
        reclaim.set(mode, [...(reclaim.get(mode) ?? []), ...times]);
        // The next round's child must get its jobs: this round's survivor stops.
        await survivor.close();
        survivor = undefined;
      }
    }
    const counts = await queue.counts();
    if (counts.completed < ids.length)
      out.failures.push(`${ids.length - counts.completed} jobs not completed after the last round`);
    out.acknowledged = ids.length;
    const where = await whereAre(conn, Q);
    let rerunOutsideHeld = 0;
    let notOnce = 0;
    for (const id of ids) {
      const set = where.get(id);
      if (set === undefined) out.lost += 1;
      else if (set !== "done") out.stuck += 1;
      const runs = starts.get(id)?.length ?? 0;
      if (runs !== 1) notOnce += 1;
      // The child's run of a held job, and the survivor's: run twice.
      if (heldAt.has(id)) out.completedTwice += 1;
      else if (runs > 1) rerunOutsideHeld += 1;
    }
    out.breaches += rerunOutsideHeld + notOnce + early + late;
    if (notOnce > 0) out.failures.push(`${notOnce} jobs not run exactly once by the survivor`);
    if (early > 0) out.failures.push(`${early} held jobs run by the survivor before the kill`);
    if (late > 0)
      out.failures.push(`${late} held jobs back later than lease + reaper + ${p.marginMs} ms after the kill`);
    out.crashes += await env.crashes();
    out.notes.push(
      `held at each kill: ${heldPerKill.join(", ")}; run twice ${out.completedTwice} (the held; outside them ${rerunOutsideHeld})`,
      `held jobs started again after the kill: ${[...reclaim].map(([m, t]) => `${m} ${msRange(t)}`).join(", ")} (lease ${p.leaseMs} ms, ${msRange(leftAtKill.map(Math.round))} of it left at the kill; reaper ${wire === 6 ? "the node's" : `every ${REAP_EVERY_MS} ms`}): ${msRange(lag.map(Math.round))} after each one's lease ended`,
      `survivor errors: ${errors.text(2)}`,
    );
    checkTargets(out);
  } finally {
    if (child && child.child.exitCode === null && child.child.signalCode === null)
      child.child.kill("SIGKILL");
    await quietly(survivor?.close());
    await quietly(survivorConn?.close());
  }
}

function startSurvivor(
  conn: Connection,
  queue: string,
  starts: Map<string, number[]>,
  errors: Tally,
): Worker {
  const w = new Worker(
    new Queue(queue, conn),
    async (job) => {
      starts.set(job.id, [...(starts.get(job.id) ?? []), Date.now()]);
      await sleep(1);
      return job.id;
    },
    { concurrency: 10, leaseMs: 30_000, reapEveryMs: REAP_EVERY_MS, keepCompleted: 1_000_000 },
  );
  w.on("error", (err) => errors.add(brief(err)));
  return w;
}

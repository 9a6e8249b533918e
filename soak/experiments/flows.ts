/**
 * Flows across shards, with the relay killed: on a local cluster of three primaries, `parents`
 * parents (one queue, on the first shard) of `children` children each, spread round-robin over
 * one child queue per shard. The child queues' workers — and with them the relays of their
 * outboxes — run in a child process that is SIGKILLed `kills` times mid-way (a new one started
 * each time); the parents' worker runs here.
 *
 * Targets: every parent runs exactly once (`completedTwice` counts the others), and only after
 * all its children (`breaches`: a parent whose handler found fewer than `children` results);
 * zero lost (`lost`: children whose result never reached their parent, `stuck`: parents that
 * never ran within `drainMs`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  type Connection,
  connect,
  FlowProducer,
  type Job,
  Queue,
  type Wire,
  Worker,
} from "../../src/index.js";
import { queueOn, queuePerShard } from "../../test/support/cluster-helpers.js";
import type { LocalCluster } from "../../test/support/cluster.js";
import { clusterFor } from "./cluster-load.js";
import { brief, checkTargets, measure, type Outcome, quietly, Tally, waitFor, within } from "./common.js";

interface FlowsParams {
  parents: number;
  children: number;
  kills: number;
  /** Bound for every parent to run after the last restart (ms). */
  drainMs: number;
}

export const flowsDefaults = {
  soak: { parents: 1000, children: 10, kills: 2, drainMs: 180_000 },
  suite: { parents: 100, children: 10, kills: 1, drainMs: 60_000 },
} satisfies Record<string, FlowsParams>;

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../../test/fixtures/flow-children-process.ts", import.meta.url));

function spawnChildren(
  seeds: readonly { host: string; port: number }[],
  wire: Wire,
  queues: readonly string[],
): { child: ChildProcess; ready: Promise<void>; exited: Promise<void> } {
  const args = ["--import", "tsx", CHILD, JSON.stringify(seeds), String(wire), queues.join(",")];
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
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
      reject(new Error(`the children's process exited (${code ?? signal}) before ready: ${stderr}`)),
    );
  });
  ready.catch(() => {});
  return { child, ready, exited };
}

/**
 * The run on a started cluster (`conn` over its seeds): what the suite's short form and the soak
 * experiment share.
 */
export function flowsOnCluster(
  cluster: LocalCluster,
  conn: Connection,
  wire: Wire,
  p: FlowsParams,
): Promise<Outcome> {
  return measure("flows across shards", wire, { ...p }, async (out) => {
    const stamp = Date.now().toString(36);
    const parentQueue = queueOn(cluster.primaries()[0]!, `fparent-${stamp}-`);
    const childQueues = queuePerShard(cluster, `fchild-${stamp}-`);
    const flows = new FlowProducer(conn);
    const ids: string[] = [];
    for (let i = 0; i < p.parents; i += 50) {
      const batch = Array.from({ length: Math.min(50, p.parents - i) }, (_, j) =>
        flows.add({
          queue: parentQueue,
          payload: `parent ${i + j}`,
          children: Array.from({ length: p.children }, (_, c) => ({
            queue: childQueues[(i + j + c) % childQueues.length]!,
            payload: `${i + j}.${c}`,
          })),
        }),
      );
      for (const node of await Promise.all(batch)) ids.push(node.id);
    }
    out.acknowledged = p.parents * (p.children + 1);

    const parents = new Queue(parentQueue, conn);
    const runs = new Map<string, number>();
    let early = 0;
    const errors = new Tally();
    const worker = new Worker(
      parents,
      async (job: Job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        const values = await parents.getChildrenValues(job.id);
        if (Object.keys(values ?? {}).length !== p.children) early += 1;
      },
      { concurrency: 20, keepCompleted: p.parents * 2 },
    );
    worker.on("error", (err) => errors.add(brief(err)));
    let child: ChildProcess | undefined;
    /** Outbox entries left unrelayed at each kill. */
    const atKill: number[] = [];
    try {
      for (let k = 1; k <= p.kills; k++) {
        const kid = spawnChildren(cluster.seeds, wire, childQueues);
        child = kid.child;
        await within("the children's process to be ready", kid.ready, 60_000);
        const target = Math.floor((p.parents * k) / (p.kills + 1));
        const reached = await waitFor(() => runs.size >= target, p.drainMs, 10);
        if (!reached) throw new Error(`kill ${k}: only ${runs.size} of ${target} parents ran`);
        kid.child.kill("SIGKILL");
        await within("the children's process to exit", kid.exited, 10_000);
        let left = 0;
        for (const q of childQueues) left += Number(await conn.send("ZCARD", [`emq:{${q}}:outbox`]));
        atKill.push(left);
      }
      const last = spawnChildren(cluster.seeds, wire, childQueues);
      child = last.child;
      await within("the children's process to be ready", last.ready, 60_000);
      const t0 = Date.now();
      await waitFor(() => runs.size >= p.parents, p.drainMs, 20);
      out.notes.push(
        `the last ${p.parents - Math.floor((p.parents * p.kills) / (p.kills + 1))} parents in ${Date.now() - t0} ms after the last restart`,
      );
      // A parent run twice would show within a lease or two.
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      child?.kill("SIGKILL");
      await quietly(worker.close());
    }

    let recorded = 0;
    for (const id of ids) recorded += Object.keys((await parents.getChildrenValues(id)) ?? {}).length;
    out.lost = p.parents * p.children - recorded;
    out.stuck = ids.filter((id) => !runs.has(id)).length;
    out.completedTwice = [...runs.values()].filter((n) => n > 1).length;
    out.breaches = early;
    out.notes.push(
      `${p.parents} parents × ${p.children} children over ${childQueues.length} shards; ${p.kills} kill(s) of the relaying process`,
      `outbox entries left unrelayed at each kill: ${atKill.join(", ")}`,
    );
    if (errors.total > 0) out.notes.push(`parent worker errors: ${errors.text()}`);
    checkTargets(out);
    if (out.completedTwice > 0) out.failures.push(`${out.completedTwice} parents ran more than once`);
  });
}

/** The experiment: its own cluster (module nodes on wire 6), the run, the cluster stopped. */
export async function flowsAcrossShards(wire: Wire, p: FlowsParams): Promise<Outcome> {
  const cluster = await clusterFor(wire, {});
  const conn = await connect({ nodes: cluster.seeds, wire, name: "emq-flows" });
  try {
    return await flowsOnCluster(cluster, conn, wire, p);
  } finally {
    await quietly(conn.close());
    await cluster.stop();
  }
}

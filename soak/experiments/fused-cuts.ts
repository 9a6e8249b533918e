/**
 * Fused cuts: a Worker reaches the server through the fault proxy, and its connection is cut
 * between a fused settlement and its reply, `rounds` times each way:
 *
 *   reply lost  the proxy forwards the call (`COMPLETENEXT`, or `COMPLETEN`), drops what the server
 *               answers from then on and cuts the connection 20 ms later: the server ran it.
 *   call lost   the proxy swallows the call and cuts the connection: the server never ran it.
 *
 * `COMPLETENEXT` rounds run a worker of `concurrency` slots (a completion that leases the slot's
 * next job); `COMPLETEN` rounds a batch worker (`batch: { size, maxWaitMs }`: the batch's
 * completions in one call). The queue keeps a backlog, so every round has work.
 *
 * Targets: after every cut the worker completes `perRound` more jobs within `roundMs` (it
 * reconnects and goes on; a round that does not is a stall, a failure); every acknowledged job
 * completes (0 lost, 0 stuck); a job runs twice only if its completion was in flight at a cut
 * (`breaches` counts the others); every job a lost reply leased (`COMPLETENEXT`'s next job, or a
 * claim's) comes back when its lease ends and runs — its run starts after the cut, no sooner
 * than the lease (less the reaper's period) allows. Figures: per kind, how long after the cut the
 * `perRound` jobs completed, and how long after it the jobs of lost replies started again.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Connection, connect, Queue, type Wire, Worker } from "../../src/index.js";
import { parseReply } from "../../src/resp.js";
import { scriptFor } from "../../src/scripts/index.js";
import { type FaultProxy, startProxy } from "../../test/support/proxy.js";
import { queueOn } from "../../test/support/cluster-helpers.js";
import { clusterFor } from "./cluster-load.js";
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
  within,
} from "./common.js";
import { JobsLedger } from "./jobs-ledger.js";

interface FusedCutsParams {
  /** Cuts of each kind (4 kinds: COMPLETENEXT / COMPLETEN, reply lost / call lost). */
  rounds: number;
  concurrency: number;
  /** Batch size of the COMPLETEN worker. */
  batchSize: number;
  handlerMs: number;
  leaseMs: number;
  /** Jobs that must complete after each cut… */
  perRound: number;
  /** …within this long (ms). */
  roundMs: number;
  /** Bound for the queue to drain at the end (ms). */
  drainMs: number;
  /** 1: each cut also cuts every other connection (the wake subscription too); 0: the call's alone. */
  cutAll: number;
}

export const fusedCutsDefaults = {
  soak: {
    rounds: 8,
    concurrency: 8,
    batchSize: 10,
    handlerMs: 5,
    leaseMs: 2000,
    perRound: 20,
    roundMs: 20_000,
    drainMs: 60_000,
    cutAll: 0,
  },
  suite: {
    rounds: 2,
    concurrency: 4,
    batchSize: 10,
    handlerMs: 5,
    leaseMs: 1500,
    perRound: 20,
    roundMs: 20_000,
    drainMs: 30_000,
    cutAll: 0,
  },
} satisfies Record<string, FusedCutsParams>;

type Verb = "COMPLETENEXT" | "COMPLETEN";
type Way = "reply lost" | "call lost";

/** Whether a client command is `verb` (its `EMQ.` form, or `EVALSHA` of its script). */
function isVerb(verb: Verb): (args: string[]) => boolean {
  const sha = scriptFor(verb).sha1;
  return (a) => a[0]?.toUpperCase() === `EMQ.${verb}` || (a[0]?.toUpperCase() === "EVALSHA" && a[1] === sha);
}

/** The ids of every claim reply (`[id, payload, attempts, deadline, timeout]`) in `bytes`. */
function leasedIn(bytes: Buffer, known: ReadonlySet<string>): string[] {
  const ids: string[] = [];
  const visit = (r: { t: string; v?: unknown }) => {
    if (r.t !== "array" || !Array.isArray(r.v)) return;
    const v = r.v as { t: string; v?: unknown }[];
    const first = v[0];
    if (v.length === 5 && first?.t === "bulk" && known.has(String(first.v))) ids.push(String(first.v));
    for (const e of v) visit(e);
  };
  for (let at = 0; at < bytes.length; ) {
    let parsed: ReturnType<typeof parseReply>;
    try {
      parsed = parseReply(bytes, at);
    } catch {
      break;
    }
    if (parsed === null) break;
    visit(parsed[0] as { t: string; v?: unknown });
    at = parsed[1];
  }
  return ids;
}

/** Where the experiment runs: a node or a cluster, the proxy in front of the queue's node. */
interface Env {
  queue: string;
  direct: Connection;
  /** The proxy in front of the node that holds the queue. */
  proxy: FaultProxy;
  /** Every proxy (connections accepted are counted over them all). */
  proxies: readonly FaultProxy[];
  /** A connection through the proxies. */
  proxied(name: string): Promise<Connection>;
  /** A connection straight to the server (the finisher's). */
  straight(name: string): Promise<Connection>;
  crashes(): Promise<number>;
}

export function fusedCuts(wire: Wire, p: FusedCutsParams): Promise<Outcome> {
  return measure("fused cuts", wire, { ...p }, async (out) => {
    const server = await startFor(wire);
    const proxy = await startProxy({ targetPort: server.port });
    let direct: Connection | undefined;
    try {
      direct = await connectTo(server.port, wire, "emq-direct");
      await fusedRun(out, p, {
        queue: "fused",
        direct,
        proxy,
        proxies: [proxy],
        proxied: (name) => connect({ port: proxy.port, wire, name }),
        straight: (name) => connectTo(server.port, wire, name),
        crashes: () => crashedOnItsOwn(server),
      });
    } finally {
      await quietly(direct?.close(), proxy.close());
      await server.stop();
    }
  });
}

/**
 * The same on a local cluster of three primaries: a proxy in front of every primary, the worker's
 * cluster client sent through them (`natMap`: each node's announced address to its proxy), the
 * queue on the first primary's shard.
 */
export function fusedCutsCluster(wire: Wire, p: FusedCutsParams): Promise<Outcome> {
  return measure("fused cuts (cluster)", wire, { ...p }, async (out) => {
    const cluster = await clusterFor(wire, {});
    const proxies: FaultProxy[] = [];
    let direct: Connection | undefined;
    try {
      const natMap: Record<string, { host: string; port: number }> = {};
      for (const node of cluster.nodes) {
        const proxy = await startProxy({ targetPort: node.port });
        proxies.push(proxy);
        natMap[`127.0.0.1:${node.port}`] = { host: proxy.host, port: proxy.port };
      }
      const home = cluster.primaries()[0]!;
      const proxy = proxies[cluster.nodes.indexOf(home)]!;
      const seeds = proxies.map((x) => ({ host: x.host, port: x.port }));
      direct = await connect({ nodes: cluster.seeds, wire, name: "emq-direct" });
      await fusedRun(out, p, {
        queue: queueOn(home, "fused-"),
        direct,
        proxy,
        proxies,
        proxied: (name) => connect({ nodes: seeds, natMap, wire, name }),
        straight: (name) => connect({ nodes: cluster.seeds, wire, name }),
        crashes: () => crashedAmong(cluster.nodes),
      });
    } finally {
      await quietly(direct?.close(), ...proxies.map((x) => x.close()));
      await cluster.stop();
    }
  });
}

async function fusedRun(out: Outcome, p: FusedCutsParams, env: Env): Promise<void> {
  const { proxy, direct } = env;
  const Q = env.queue;
  const queue = new Queue(Q, direct);
  const ledger = new JobsLedger();
  const startedAt = new Map<string, number[]>();
  let next = 0;
  const topUp = async (n: number) => {
    const added = await queue.addBulk(Array.from({ length: n }, () => ({ payload: `f${next++}` })));
    for (const a of added) ledger.acked.add(a.id);
  };
  const handler = ledger.handler(async (job) => {
    startedAt.set(job.id, [...(startedAt.get(job.id) ?? []), Date.now()]);
    await sleep(p.handlerMs);
  });
  const lostLeases: { id: string; cutAt: number }[] = [];
  const roundTimes = new Map<string, number[]>();
  const errors = new Tally();
  let cuts = 0;
  for (const verb of ["COMPLETENEXT", "COMPLETEN"] as const) {
    const conn = await env.proxied("emq-fused-worker");
    const common = { leaseMs: p.leaseMs, reapEveryMs: 250, attempts: 100, keepCompleted: 1_000_000 };
    const worker =
      verb === "COMPLETENEXT"
        ? new Worker(new Queue(Q, conn), handler, { ...common, concurrency: p.concurrency })
        : new Worker(
            new Queue(Q, conn),
            async (jobs) => {
              for (const job of jobs) await handler(job);
              return jobs.map(() => "ok");
            },
            { ...common, concurrency: 2, batch: { size: p.batchSize, maxWaitMs: 20 } },
          );
    ledger.follow(worker);
    worker.on("error", (err) => errors.add(brief(err)));
    try {
      await worker.ready;
      for (let r = 1; r <= p.rounds; r++) {
        for (const way of ["reply lost", "call lost"] as Way[]) {
          const kind = `${verb} ${way}`;
          await topUp(Math.max(p.perRound, p.concurrency) * 3);
          const trap =
            way === "reply lost"
              ? proxy.loseReplyOf(isVerb(verb))
              : proxy.swallowNext(isVerb(verb)).then((command) => ({ command, dropped: Buffer.alloc(0) }));
          const { dropped } = await within(`a ${verb} to cut (${kind}, round ${r})`, trap, p.roundMs);
          if (p.cutAll) proxy.cut();
          const cutAt = Date.now();
          ledger.fault();
          cuts += 1;
          for (const id of leasedIn(dropped, ledger.acked)) lostLeases.push({ id, cutAt });
          const before = ledger.confirmed.size;
          const went = await waitFor(() => ledger.confirmed.size >= before + p.perRound, p.roundMs, 10);
          if (!went) {
            out.breaches += 1;
            out.failures.push(
              `${kind}, round ${r} (cut ${cuts}): ${ledger.confirmed.size - before} of ${p.perRound} more jobs completed within ${p.roundMs} ms of the cut (a stall)`,
            );
            throw new Error(`the worker stalled after cut ${cuts} (${kind}, round ${r})`);
          }
          roundTimes.set(kind, [...(roundTimes.get(kind) ?? []), Date.now() - cutAt]);
        }
      }
    } finally {
      await quietly(worker.close());
      await quietly(conn.close());
    }
  }

  // The rest of the queue, and every lease a lost reply took, on a worker with no cuts.
  const finisherConn = await env.straight("emq-finisher");
  const finisher = new Worker(new Queue(Q, finisherConn), handler, {
    concurrency: p.concurrency,
    leaseMs: p.leaseMs,
    reapEveryMs: 250,
    attempts: 100,
    keepCompleted: 1_000_000,
  });
  ledger.follow(finisher);
  finisher.on("error", (err) => errors.add(brief(err)));
  const drained = await waitFor(
    async () => {
      if (!ledger.allRan()) return false;
      const c = await queue.counts();
      return c.pending + c.active + c.scheduled === 0;
    },
    p.drainMs,
    50,
  );
  await quietly(finisher.close());
  await quietly(finisherConn.close());
  if (!drained) out.failures.push(`the queue did not drain within ${p.drainMs} ms`);

  out.crashes += await env.crashes();
  await ledger.settle(out, direct, Q);
  // Each job a lost reply leased starts again after the cut, once its lease has ended.
  const backAfter: number[] = [];
  for (const { id, cutAt } of lostLeases) {
    const starts = (startedAt.get(id) ?? []).filter((t) => t >= cutAt);
    if (starts.length === 0) {
      out.breaches += 1;
      out.failures.push(`job ${id}, leased in a lost reply, never ran after the cut`);
      continue;
    }
    const ms = starts[0]! - cutAt;
    backAfter.push(ms);
    if (ms < p.leaseMs - 300) {
      out.breaches += 1;
      out.failures.push(
        `job ${id}, leased in a lost reply, ran ${ms} ms after the cut: before its lease ended`,
      );
    }
  }
  out.notes.push(
    `${cuts} cuts; ${[...roundTimes].map(([k, ms]) => `${k}: ${p.perRound} more done ${msRange(ms)} after`).join("; ")}`,
    `jobs leased in lost replies ${lostLeases.length}, running again ${msRange(backAfter)} after the cut (lease ${p.leaseMs} ms; reaper: on wire 4 the worker's, every 250 ms, on wire 6 the node's)`,
    `proxy connections accepted ${env.proxies.reduce((n, x) => n + x.stats.accepted, 0)}; worker errors: ${errors.text(3)}`,
  );
  checkTargets(out);
}

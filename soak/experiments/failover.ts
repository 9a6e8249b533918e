/**
 * Failover under load: 3 primaries with a replica each, `queues` queues spread over the shards,
 * two groups of producers — one without durability, one with `durability: { replicas: 1,
 * timeoutMs }` on a connection of its own — and a worker per queue; `kills` times, one primary is
 * SIGKILLed (`crash()`, nothing saved), its replica is promoted by the cluster (automatic
 * failover within the node timeout), and everyone carries on: the connections read the slot map
 * again, the wake subscribers find the new owner. The killed node is restarted (it rejoins as a
 * replica) before the next kill. Every other kill (the 1st, the 3rd …) first cuts the primary's
 * link to its replica (`CLIENT KILL TYPE replica`, the replica held in `DEBUG SLEEP` so it cannot
 * reconnect) `cutLinkMs` before the SIGKILL: a partition, then the primary dies.
 *
 * Replication is asynchronous: an add the dead primary acknowledged before its replica had it is
 * gone from the promoted one. Counted, per group and kill: acknowledged adds gone (in no set, no
 * row — the outcome's `lost`, whether or not the job had run before the kill), of them never run,
 * and how many ms before the kill each was acknowledged — the window. A durable add is
 * acknowledged only after `WAIT 1` saw the replica have it. Completed twice is allowed only for
 * a job whose run was in flight at a kill (its claim or completion may not have reached the
 * replica), or whose confirmed completion was lost with the primary; the others are breaches.
 * Targets: 0 durable adds gone (and, so that this says something, some adds without durability
 * gone at each kill after a link cut), 0 stuck, every job still present completed, no breach.
 * Also measured: add latency with and without `WAIT`, quiet (one add at a time, one of each in
 * turn, before the load) and under the load.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Connection, connect, Queue, type Wire } from "../../src/index.js";
import type { ClusterNode, LocalCluster } from "../../tools/local-cluster.js";
import {
  closeAll,
  clusterFor,
  Producers,
  percentile,
  queuesOn,
  serves,
  wakeSubscribers,
  workersFor,
} from "./cluster-load.js";
import { measure, type Outcome, waitFor } from "./common.js";
import { JobsLedger } from "./jobs-ledger.js";

interface FailoverParams {
  /** Queues, spread evenly over the three shards. */
  queues: number;
  /** Primaries SIGKILLed, one at a time (the 1st, 3rd … after a link cut). */
  kills: number;
  /** Load before each kill (ms); the producers go on this long after the last one too. */
  spacingMs: number;
  /** Adds in flight at once, per group. */
  producers: number;
  /** Pause after each add, per producer (ms). */
  gapMs: number;
  /** Worker slots per queue. */
  concurrency: number;
  /** The durable group's `WAIT 1 <waitMs>`. */
  waitMs: number;
  /** How long before a cut kill the replica's link is cut (ms). */
  cutLinkMs: number;
  /** `cluster-node-timeout` (ms): how soon a dead primary is failed over. */
  nodeTimeoutMs: number;
  /** Sequential adds per group before the load, for the quiet latency. */
  quiet: number;
  /** Bound for the queues to drain after the last add (ms). */
  drainMs: number;
}

export const failoverDefaults = {
  soak: {
    queues: 12,
    kills: 4,
    spacingMs: 3000,
    producers: 6,
    gapMs: 1,
    concurrency: 2,
    waitMs: 1000,
    cutLinkMs: 150,
    nodeTimeoutMs: 2000,
    quiet: 1000,
    drainMs: 60_000,
  },
  suite: {
    queues: 12,
    kills: 1,
    spacingMs: 1000,
    producers: 4,
    gapMs: 1,
    concurrency: 2,
    waitMs: 1000,
    cutLinkMs: 150,
    nodeTimeoutMs: 2000,
    quiet: 200,
    drainMs: 30_000,
  },
} satisfies Record<string, FailoverParams>;

/** One kill: when, whether the link was cut first, and how the cluster and the clients came back. */
interface Kill {
  at: number;
  cut: boolean;
  failoverMs: number;
  /** The first add acknowledged on a queue of the dead shard, after the kill (ms; -1: none). */
  resumedMs: number;
  /** Per queue of the dead shard: its wake subscriber on the promoted node, after the kill (ms; -1: never). */
  followMs: number[];
}

const ms = (x: number) => `${x.toFixed(1)} ms`;
const round = (xs: number[]) => xs.map((x) => Math.round(x)).join("/");

/** The kill an add acknowledged at `at` came before (the first kill after it), or -1. */
function killAfter(at: number, kills: readonly Kill[]): number {
  return kills.findIndex((k) => k.at >= at);
}

/** SIGKILLs the primary `victim` (after cutting its replica's link when `cut`); waits for the failover. */
async function kill(
  cluster: LocalCluster,
  victim: ClusterNode,
  cut: number,
  ledger: JobsLedger,
  lastAck: (q: string) => number,
  queues: readonly string[],
): Promise<Kill> {
  const replica = cluster.replicas(victim)[0]!;
  const own = new Set(queues.filter((q) => serves(victim, q)));
  if (cut > 0) {
    // The replica sleeps (it cannot reconnect), then its link is cut: what the primary
    // acknowledges from now on reaches no replica.
    const asleep = replica.cli("DEBUG", "SLEEP", (cut + 400) / 1000).catch(() => {});
    await sleep(20);
    await victim.cli("CLIENT", "KILL", "TYPE", "replica");
    await sleep(cut);
    void asleep;
  }
  ledger.fault();
  const at = performance.now();
  await victim.crash();
  await sleep(100);
  ledger.fault(); // handlers started from claims the dead primary answered just before the kill
  const promoted = await waitFor(
    async () => {
      await cluster.refresh().catch(() => {});
      return replica.role === "primary" && replica.slots.length > 0;
    },
    30_000,
    50,
  );
  if (!promoted) throw new Error(`the replica of ${victim.port} was not promoted within 30 s`);
  const failoverMs = performance.now() - at;
  const resumed = await waitFor(() => [...own].some((q) => lastAck(q) > at), 30_000, 10);
  const resumedMs = resumed ? performance.now() - at : -1;
  const followMs: number[] = [];
  for (const q of own) {
    const ok = await waitFor(async () => (await wakeSubscribers(replica, q)) >= 1, 15_000, 20);
    followMs.push(ok ? performance.now() - at : -1);
  }
  await victim.restart(); // rejoins as a replica of the promoted node, synced from it
  await cluster.healthy();
  return { at, cut: cut > 0, failoverMs, resumedMs, followMs };
}

export function failover(wire: Wire, p: FailoverParams): Promise<Outcome> {
  return measure("failover", wire, { ...p }, async (out) => {
    const cluster = await clusterFor(wire, { replicas: 1, nodeTimeoutMs: p.nodeTimeoutMs });
    const conns: Connection[] = [];
    let workers: Awaited<ReturnType<typeof workersFor>> | undefined;
    try {
      const queues = cluster
        .primaries()
        .flatMap((node, k) => queuesOn(node, Math.ceil(p.queues / 3), `f${k}-`));
      const open = async (name: string) => {
        const c = await connect({ nodes: cluster.seeds, wire, name });
        conns.push(c);
        return c;
      };
      const plainConn = await open("emq-plain");
      const durableConn = await open("emq-durable"); // WAIT holds its node connection: a connection of its own
      const workerConn = await open("emq-worker");
      const ledger = new JobsLedger();
      workers = await workersFor(workerConn, queues, ledger, {
        concurrency: p.concurrency,
        leaseMs: 5000,
        keepCompleted: 1_000_000,
      });
      const confirmedAt = new Map<string, number>();
      for (const w of workers.workers) {
        w.on("completed", (job) => {
          if (!confirmedAt.has(job.id)) confirmedAt.set(job.id, performance.now()); // the first confirmation
        });
      }
      const durability = { replicas: 1, timeoutMs: p.waitMs };

      // Quiet latency: one add without, one with durability, in turn, before the load.
      const one = { adds: p.quiet, producers: 1, gapMs: 0 };
      const quietPlain = new Producers(plainConn, queues, ledger, one);
      const quietDurable = new Producers(durableConn, queues, ledger, { ...one, durability });
      for (let i = 0; i < p.quiet; i++) {
        await quietPlain.add(i);
        await quietDurable.add(i);
      }

      const load = { adds: Number.POSITIVE_INFINITY, producers: p.producers, gapMs: p.gapMs };
      const plain = new Producers(plainConn, queues, ledger, load).start();
      const durable = new Producers(durableConn, queues, ledger, { ...load, durability }).start();
      const lastAck = (q: string) => Math.max(plain.lastAck.get(q) ?? 0, durable.lastAck.get(q) ?? 0);
      const kills: Kill[] = [];
      for (let k = 0; k < p.kills; k++) {
        await sleep(p.spacingMs);
        await cluster.refresh();
        const victim = cluster.primaries()[k % 3]!;
        kills.push(await kill(cluster, victim, k % 2 === 0 ? p.cutLinkMs : 0, ledger, lastAck, queues));
      }
      await sleep(p.spacingMs);
      await Promise.all([plain.stop(), durable.stop()]);

      const t1 = Date.now();
      // Drained: every queue empty. (Not "every acknowledged job ran": an add gone with a primary never runs.)
      const drained = await waitFor(
        async () => {
          for (const q of queues) {
            const c = await new Queue(q, workerConn).counts();
            if (c.pending + c.active + c.scheduled > 0) return false;
          }
          return true;
        },
        p.drainMs,
        100,
      );
      const drainMs = Date.now() - t1;
      // A rerun is explained when the run was in flight at a kill, or when the completion the
      // dead primary confirmed before its kill never reached the replica.
      const lostCompletion = (id: string) =>
        ledger.afterConfirmed.has(id) && killAfter(confirmedAt.get(id) ?? Infinity, kills) >= 0;
      const { lost, twice, gone } = await ledger.settle(out, workerConn, queues, lostCompletion);
      out.lost = gone.length; // here: acknowledged adds the cluster lost, whether or not they had run

      const ackOf = (id: string) =>
        plain.ackAt.get(id) ??
        quietPlain.ackAt.get(id) ??
        durable.ackAt.get(id) ??
        quietDurable.ackAt.get(id)!;
      const isDurable = (id: string) => durable.ackAt.has(id) || quietDurable.ackAt.has(id);
      const goneDurable = gone.filter(isDurable);
      for (const [k, at] of kills.entries()) {
        const here = gone.filter((id) => !isDurable(id) && killAfter(ackOf(id), kills) === k);
        if (at.cut && here.length === 0)
          out.failures.push(
            `kill ${k + 1}: the link cut lost no add without durability (the window was not exercised)`,
          );
        const window = here.map((id) => at.at - ackOf(id)).sort((a, b) => a - b);
        out.notes.push(
          `kill ${k + 1}${at.cut ? ` (replica link cut ${p.cutLinkMs} ms before)` : ""}: failover ${Math.round(at.failoverMs)} ms, ` +
            `first add on the dead shard acknowledged ${Math.round(at.resumedMs)} ms after the kill, ` +
            `wake subscribers on the promoted node ${at.followMs.filter((x) => x >= 0).length} of ${at.followMs.length} (by ${Math.round(Math.max(0, ...at.followMs))} ms); ` +
            `adds without durability gone ${here.length}` +
            (here.length ? `, acknowledged ${ms(window[0]!)}–${ms(window.at(-1)!)} before the kill` : ""),
        );
      }
      const lat = (g: Producers) =>
        `p50 ${ms(percentile(g.latencyMs, 50))}, p99 ${ms(percentile(g.latencyMs, 99))}`;
      out.notes.push(
        `gone without durability ${gone.length - goneDurable.length} of ${plain.acked + quietPlain.acked} (never run: ${lost.filter((id) => !isDurable(id)).length}); ` +
          `with durability (WAIT 1 ${p.waitMs}) ${goneDurable.length} of ${durable.acked + quietDurable.acked}`,
        `add latency quiet (one add at a time, in turn): without WAIT ${lat(quietPlain)}; with WAIT ${lat(quietDurable)}`,
        `add latency under load and kills: without WAIT ${lat(plain)}; with WAIT ${lat(durable)}`,
        `adds sent again: without durability ${plain.resends.total} (${plain.resends.text(2)}); with ${durable.resends.total} (${durable.resends.text(2)})`,
        `run twice ${twice.length}: in flight at a kill ${twice.filter((id) => ledger.heldAtFault.has(id)).length}, ` +
          `a confirmed completion lost with the primary ${twice.filter((id) => !ledger.heldAtFault.has(id) && lostCompletion(id)).length}; ` +
          `worker errors ${workers.errors.total} (${workers.errors.text(2)})`,
        `failover ${round(kills.map((k) => k.failoverMs))} ms; drain after the last add ${drained ? `${drainMs} ms` : `timed out (${p.drainMs} ms)`}`,
      );
      if (goneDurable.length > 0) out.failures.push(`${goneDurable.length} durable adds gone`);
      if (out.stuck > 0) out.failures.push(`${out.stuck} jobs stuck`);
      if (out.breaches > 0) out.failures.push(`${out.breaches} breaches`);
      if (kills.some((k) => k.followMs.some((x) => x < 0)))
        out.failures.push("a wake subscriber did not find the promoted node");
      if (kills.some((k) => k.resumedMs < 0))
        out.failures.push("no add was acknowledged on the dead shard after the failover");
      const unacked = plain.unacked + durable.unacked;
      if (unacked > 0) out.failures.push(`${unacked} adds never acknowledged`);
      if (!drained) out.failures.push("the queues did not drain");
    } finally {
      await closeAll(workers?.workers ?? [], conns);
      await cluster.stop();
    }
  });
}

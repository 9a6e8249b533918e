/**
 * Resharding under load: a cluster of 3 primaries, `queues` queues spread over the shards,
 * producers adding to all of them continuously and a worker per queue processing; while they
 * run, `valkey-cli --cluster reshard` moves slots the legacy way (`MIGRATE`, `pipeline` keys at a
 * time), `rounds` times. Each round moves the `moving` lowest slots of one primary to the next
 * (P0 → P1 → P2 → P0 …): the lowest slots travel, and the `moving` queues placed in them (one per
 * slot) with them; the others stay put.
 *
 * While a slot is half moved, a transition on its queue is answered `ASK` (its keys are all gone
 * to the target) or `TRYAGAIN` (they are split, or one is absent — the queue's base key, which
 * every transition declares and no command writes, always is) before it runs; the client
 * follows `ASK` and retries `TRYAGAIN`, and an add that still fails is sent again with its own
 * id. Counted: acknowledged adds, lost (acknowledged, never run, not present), completed twice
 * (allowed only for a job whose lease expired — reaped — while its completion was held up),
 * stuck; the redirections each node answered; and each moved queue's wake subscriber found on
 * the new owner, none left on the old. Targets: 0 lost, 0 stuck, every job completed, every
 * subscriber followed its slot; and some `ASK` or `TRYAGAIN` answered (else the moves met no load).
 *
 * `resharding-atomic` (Valkey 9 only: `ECHOMQ_VALKEY_SERVER` at a v9 server) moves the same slots
 * with `CLUSTER MIGRATESLOTS` instead: the slot's keys are copied to the target while the source
 * keeps serving them, and ownership changes hands at once, so no transition meets a half-moved
 * slot (`ASK`/`TRYAGAIN`); the clients learn the new owner from `MOVED`. Same targets, but the
 * redirections asked of it: none `ASK` or `TRYAGAIN`; the `MOVED` and the time per move are
 * reported beside the legacy way's.
 */
import { type Connection, connect, Queue, type Wire } from "../../src/index.js";
import type { ClusterNode, LocalCluster } from "../../tools/local-cluster.js";
import {
  closeAll,
  clusterFor,
  Producers,
  queuesOn,
  reapedOnBus,
  redirectionNote,
  redirections,
  wakeSubscribers,
  workersFor,
} from "./cluster-load.js";
import { checkTargets, measure, type Outcome, waitFor } from "./common.js";
import { JobsLedger } from "./jobs-ledger.js";
import { queueInSlot } from "../../test/support/cluster-helpers.js";

interface ReshardingParams {
  /** Queues in all, each with producers and a worker. */
  queues: number;
  /** Slots moved per round — and queues that travel with them, one per slot. */
  moving: number;
  /** Reshard rounds, spread over the load. */
  rounds: number;
  /** Adds in all. */
  adds: number;
  /** Adds in flight at once. */
  producers: number;
  /** Pause after each add, per producer (ms): bounds the rate on a small box. */
  gapMs: number;
  /** Worker slots per queue. */
  concurrency: number;
  /** Keys per `MIGRATE` (`--cluster-pipeline`). */
  pipeline: number;
  /** Bound for the queues to drain after the last add (ms). */
  drainMs: number;
}

export const reshardingDefaults = {
  soak: {
    queues: 30,
    moving: 10,
    rounds: 12,
    adds: 60_000,
    producers: 8,
    gapMs: 2,
    concurrency: 2,
    pipeline: 10,
    drainMs: 60_000,
  },
  suite: {
    queues: 30,
    moving: 10,
    rounds: 3,
    adds: 4000,
    producers: 6,
    gapMs: 2,
    concurrency: 2,
    pipeline: 10,
    drainMs: 30_000,
  },
} satisfies Record<string, ReshardingParams>;

/** Waits until `q`'s wake subscriber is on `to` and none is left on `from`; the ms it took, or -1. */
async function followed(from: ClusterNode, to: ClusterNode, q: string): Promise<number> {
  const t0 = Date.now();
  const ok = await waitFor(
    async () => (await wakeSubscribers(to, q)) >= 1 && (await wakeSubscribers(from, q)) === 0,
    10_000,
    20,
  );
  return ok ? Date.now() - t0 : -1;
}

/** `count` slots from `first` moved atomically from `from` to `to`; the slots `to` got. */
async function migrate(
  cluster: LocalCluster,
  from: ClusterNode,
  to: ClusterNode,
  first: number,
  count: number,
) {
  const mine = (node: ClusterNode) => new Set(node.slots.flatMap(([lo, hi]) => slotsOf(lo, hi)));
  const before = mine(from);
  await cluster.migrateSlots(from, to, first, first + count - 1);
  return [...mine(to)].filter((slot) => before.has(slot)).sort((a, b) => a - b);
}

function slotsOf(lo: number, hi: number): number[] {
  return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

/** The atomic variant: Valkey 9's `CLUSTER MIGRATESLOTS` (see the file's head). */
export function reshardingAtomic(wire: Wire, p: ReshardingParams): Promise<Outcome> {
  return resharding(wire, p, true);
}

/** `atomic`: move with `CLUSTER MIGRATESLOTS` (Valkey 9) instead of `valkey-cli --cluster reshard`. */
export function resharding(wire: Wire, p: ReshardingParams, atomic = false): Promise<Outcome> {
  return measure(atomic ? "resharding-atomic" : "resharding", wire, { ...p }, async (out) => {
    const cluster: LocalCluster = await clusterFor(wire, {});
    let producerConn: Connection | undefined;
    let workerConn: Connection | undefined;
    let workers: Awaited<ReturnType<typeof workersFor>> | undefined;
    try {
      const [p0, p1, p2] = cluster.primaries() as [ClusterNode, ClusterNode, ClusterNode];
      const lowest = p0.slots[0]![0];
      const moving = Array.from({ length: p.moving }, (_, i) => queueInSlot(lowest + i, `mv${i}-`));
      const rest = p.queues - p.moving;
      const staying = [p0, p1, p2].flatMap((node, k) =>
        queuesOn(node, Math.floor(rest / 3) + (k < rest % 3 ? 1 : 0), `st${k}-`),
      );
      const queues = [...moving, ...staying];
      producerConn = await connect({ nodes: cluster.seeds, wire, name: "emq-producer" });
      workerConn = await connect({ nodes: cluster.seeds, wire, name: "emq-worker" });
      const ledger = new JobsLedger();
      workers = await workersFor(workerConn, queues, ledger, {
        concurrency: p.concurrency,
        leaseMs: 5000,
        keepCompleted: p.adds * 2,
      });
      for (const node of cluster.nodes) await node.cli("CONFIG", "RESETSTAT");

      const producers = new Producers(producerConn, queues, ledger, p).start();
      const ring = [p0, p1, p2];
      const reshardMs: number[] = [];
      const followMs: number[] = [];
      let notFollowed = 0;
      let strayMoves = 0;
      for (let r = 0; r < p.rounds; r++) {
        await waitFor(() => producers.acked >= Math.floor((p.adds * (r + 1)) / (p.rounds + 2)), 120_000, 10);
        const from = ring[r % 3]!;
        const to = ring[(r + 1) % 3]!;
        const t0 = Date.now();
        const moved = atomic
          ? await migrate(cluster, from, to, lowest, p.moving)
          : await cluster.reshard(from, to, p.moving, { pipeline: p.pipeline });
        reshardMs.push(Date.now() - t0);
        if (moved.length !== p.moving || moved[0] !== lowest) strayMoves += 1;
        for (const ms of await Promise.all(moving.map((q) => followed(from, to, q)))) {
          if (ms < 0) notFollowed += 1;
          else followMs.push(ms);
        }
      }
      await producers.done;

      const t1 = Date.now();
      const drained = await waitFor(
        async () => {
          if (!ledger.allRan()) return false;
          for (const q of queues) {
            const c = await new Queue(q, producerConn!).counts();
            if (c.pending + c.active + c.scheduled > 0) return false;
          }
          return true;
        },
        p.drainMs,
        100,
      );
      const drainMs = Date.now() - t1;
      const stats = redirectionNote(await redirections(cluster));
      const onBus = await reapedOnBus(producerConn, queues);
      const wasReaped = (id: string) => workers!.reaped.has(id) || onBus.has(id);
      const { twice } = await ledger.settle(out, producerConn, queues, wasReaped);
      const reaped = twice.filter(wasReaped).length;
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      const how = atomic ? "atomic migrations (CLUSTER MIGRATESLOTS)" : "reshards (valkey-cli, MIGRATE)";
      const perMove = (code: string) => (stats.totals[code]! / p.rounds).toFixed(1);
      out.notes.push(
        `${p.rounds} ${how} of ${p.moving} slots (${p.rounds * p.moving} queue moves), ` +
          `${Math.round(sum(reshardMs) / reshardMs.length)} ms each on average (max ${Math.max(...reshardMs)})`,
        stats.text,
        `per move: MOVED ${perMove("MOVED")}, ASK ${perMove("ASK")}, TRYAGAIN ${perMove("TRYAGAIN")}`,
        `wake subscribers on the new owner, none on the old: ${followMs.length} of ${p.rounds * p.moving} moves, ` +
          `within ${Math.max(0, ...followMs)} ms of the reshard's end`,
        `adds sent again ${producers.resends.total} (${producers.resends.text(3)}); never acknowledged ${producers.unacked}`,
        `run twice ${twice.length}: reaped after their lease expired ${reaped}; worker errors ${workers.errors.total} (${workers.errors.text(3)})`,
        `drain after the last add ${drained ? `${drainMs} ms` : `timed out (${p.drainMs} ms)`}`,
      );
      if (atomic && stats.totals.ASK! + stats.totals.TRYAGAIN! > 0)
        out.failures.push("ASK or TRYAGAIN answered: a transition met a half-moved slot");
      if (atomic && stats.totals.MOVED! === 0)
        out.failures.push("no MOVED answered: no transition followed a slot to its new owner");
      if (!atomic && stats.totals.ASK! + stats.totals.TRYAGAIN! === 0)
        out.failures.push("no ASK or TRYAGAIN answered: no transition met a slot while it moved");
      if (notFollowed > 0) out.breaches += notFollowed;
      if (notFollowed > 0) out.failures.push(`${notFollowed} wake subscribers did not follow their slot`);
      if (strayMoves > 0) out.failures.push(`${strayMoves} reshards moved other slots than the lowest`);
      if (producers.unacked > 0) out.failures.push(`${producers.unacked} adds never acknowledged`);
      if (!drained) out.failures.push("the queues did not drain");
      checkTargets(out);
    } finally {
      await closeAll(workers?.workers ?? [], [producerConn, workerConn]);
      await cluster.stop();
    }
  });
}

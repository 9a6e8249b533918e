/**
 * What the cluster experiments (resharding, failover) share: a local cluster for a wire,
 * producers that keep adding to many queues and send an add again with its own id until it is
 * acknowledged, a worker per queue, the redirections each node answered (`INFO errorstats`), and
 * where each queue's wake subscriber is.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Connection, type Durability, Queue, ServerError, type Wire, Worker } from "../../src/index.js";
import { newId, queueKey, slot } from "../../src/protocol.js";
import { installModuleBrand } from "../../src/admin.js";
import { parseErrorstats } from "../../tools/cluster-topology.js";
import { type ClusterNode, type LocalCluster, startCluster } from "../../tools/local-cluster.js";
import { modulePath } from "../../tools/module-path.js";
import { queueInSlot } from "../../test/support/cluster-helpers.js";
import { Tally } from "./common.js";
import type { JobsLedger } from "./jobs-ledger.js";

/** A local cluster of plain nodes (wire 4) or module nodes with the intent record branded (wire 6). */
export async function clusterFor(
  wire: Wire,
  opts: { replicas?: number; nodeTimeoutMs?: number },
): Promise<LocalCluster> {
  const cluster = await startCluster({
    primaries: 3,
    ...opts,
    ...(wire === 6 ? { module: modulePath() } : {}),
  });
  try {
    if (wire === 6) await installModuleBrand({ nodes: cluster.seeds });
    return cluster;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** `count` queue names spread over the slots `node` serves (as last read), evenly. */
export function queuesOn(node: ClusterNode, count: number, prefix: string): string[] {
  const slots = node.slots.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i));
  return Array.from({ length: count }, (_, i) =>
    queueInSlot(slots[Math.floor(((i + 0.5) * slots.length) / count)]!, `${prefix}${i}-`),
  );
}

interface ProducerOptions {
  /** Adds in all (the producers stop earlier when `stop()` is called). */
  adds: number;
  /** Adds in flight at once. */
  producers: number;
  /** A pause after each acknowledged add, per producer (bounds the rate), ms. */
  gapMs: number;
  durability?: Durability;
}

/**
 * Producers adding to `queues` in turn on `conn`. Every add has its own id (`newId()`, the
 * idempotency key); an add that fails — lost with its connection, redirected too often, a
 * cluster down, a durability wait that fell short — is sent again with the same id (`duplicate:
 * true` then means an earlier send had landed) until a reply comes back, at most `sendTries`.
 */
export class Producers {
  /** When each id was acknowledged (ms, `performance.now()`), and how long its add took. */
  readonly ackAt = new Map<string, number>();
  readonly latencyMs: number[] = [];
  /** When an add to each queue was last acknowledged (ms, `performance.now()`). */
  readonly lastAck = new Map<string, number>();
  /** Failed sends, by error. */
  readonly resends = new Tally();
  unacked = 0;
  /** When the last send failed (ms, `performance.now()`), and the first acknowledgement after it. */
  lastFailureAt = 0;
  done: Promise<void> = Promise.resolve();
  private next = 0;
  private stopped = false;

  constructor(
    private readonly conn: Connection,
    private readonly queues: readonly string[],
    private readonly ledger: JobsLedger,
    private readonly opts: ProducerOptions,
    private readonly sendTries = 200,
  ) {}

  get acked(): number {
    return this.ackAt.size;
  }

  start(): this {
    this.done = Promise.all(
      Array.from({ length: this.opts.producers }, async () => {
        while (this.next < this.opts.adds && !this.stopped) {
          await this.add(this.next++);
          if (this.opts.gapMs > 0) await sleep(this.opts.gapMs);
        }
      }),
    ).then(() => {});
    return this;
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }

  /** Adds job `i` (to queue `i mod queues`), sending it again until acknowledged. */
  async add(i: number): Promise<void> {
    const name = this.queues[i % this.queues.length]!;
    const queue = new Queue(name, this.conn);
    const id = newId();
    const durability = this.opts.durability;
    for (let attempt = 1; attempt <= this.sendTries; attempt++) {
      const t0 = performance.now();
      try {
        await queue.add(`job ${i}`, durability ? { id, durability } : { id });
        const t1 = performance.now();
        this.latencyMs.push(t1 - t0);
        this.ackAt.set(id, t1);
        this.lastAck.set(name, t1);
        this.ledger.acked.add(id);
        this.ledger.queueOf.set(id, name);
        return;
      } catch (err) {
        this.resends.add(kind(err));
        this.lastFailureAt = performance.now();
        await sleep(Math.min(20 * attempt, 200));
      }
    }
    this.unacked += 1;
  }
}

/** An error's kind for a tally: its class, and a server refusal's code (`ServerError TRYAGAIN`). */
function kind(err: unknown): string {
  if (err instanceof ServerError) return `ServerError ${err.reply.split(" ").slice(0, 5).join(" ")}`;
  return err instanceof Error ? err.name : String(err);
}

/** A worker per queue on `conn`, its handler booked by `ledger`; errors and reaped ids counted. */
export async function workersFor(
  conn: Connection,
  queues: readonly string[],
  ledger: JobsLedger,
  opts: { concurrency: number; leaseMs: number; keepCompleted: number },
): Promise<{ workers: Worker[]; errors: Tally; reaped: Set<string> }> {
  const errors = new Tally();
  const reaped = new Set<string>();
  const workers = queues.map((name) => {
    const w = new Worker(
      new Queue(name, conn),
      ledger.handler(async (job) => {
        await sleep(1 + (job.payload.length % 3));
        return "ok";
      }),
      {
        ...opts,
        reapEveryMs: 500,
        promoteEveryMs: 500,
        idleCheckMs: 1000,
        attempts: 100,
        backoff: { type: "fixed", delayMs: 0 },
      },
    );
    ledger.follow(w);
    w.on("error", (err) => errors.add(kind(err)));
    w.on("stalled", (requeued, dead) => {
      for (const id of [...requeued, ...dead]) reaped.add(id);
    });
    return w;
  });
  await Promise.all(workers.map((w) => w.ready));
  return { workers, errors, reaped };
}

/**
 * The ids the queues' buses record as reaped (`stalled` entries): on wire 6 the shard's primary
 * reaps expired leases itself (its own timers), and no worker's `stalled` event names them.
 */
export async function reapedOnBus(conn: Connection, queues: readonly string[]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const q of queues) {
    const entries = (await conn.send("XRANGE", [queueKey(q, "events"), "-", "+"])) as [Buffer, Buffer[]][];
    for (const [, fields] of entries) {
      const f = fields.map(String);
      const at = (name: string) => f[f.indexOf(name) + 1];
      if (at("event") === "stalled") ids.add(at("id")!);
    }
  }
  return ids;
}

/** `errorstat_<CODE>` counts of every running node, by `port`. */
export async function redirections(cluster: LocalCluster): Promise<Map<number, Record<string, number>>> {
  const out = new Map<number, Record<string, number>>();
  for (const node of await cluster.running()) {
    out.set(node.port, parseErrorstats(await node.cli("INFO", "errorstats")));
  }
  return out;
}

/** Redirections summed (`ASK`, `TRYAGAIN`, `MOVED`, `CLUSTERDOWN`) and per node, as a note. */
export function redirectionNote(stats: Map<number, Record<string, number>>): {
  totals: Record<string, number>;
  text: string;
} {
  const codes = ["ASK", "TRYAGAIN", "MOVED", "CLUSTERDOWN"];
  const totals: Record<string, number> = Object.fromEntries(codes.map((c) => [c, 0]));
  const per: string[] = [];
  for (const [port, counts] of stats) {
    for (const c of codes) totals[c]! += counts[c] ?? 0;
    const shown = codes.filter((c) => counts[c]).map((c) => `${c} ${counts[c]}`);
    per.push(`${port}: ${shown.join(", ") || "none"}`);
  }
  const sum = codes.map((c) => `${c} ${totals[c]}`).join(", ");
  return { totals, text: `redirections answered: ${sum} (per node — ${per.join("; ")})` };
}

/** Shard subscribers `node` has on queue `q`'s wake channel (0 when it does not answer). */
export async function wakeSubscribers(node: ClusterNode, q: string): Promise<number> {
  try {
    const reply = (await node.cli("PUBSUB", "SHARDNUMSUB", queueKey(q, "wake"))) as [string, number];
    return Number(reply[1]);
  } catch {
    return 0;
  }
}

/** The `p`-th percentile of `values` (0 when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Closes workers and connections that may already be broken. */
export async function closeAll(workers: readonly Worker[], conns: (Connection | undefined)[]): Promise<void> {
  await Promise.allSettled(workers.map((w) => w.close()));
  await Promise.allSettled(conns.map((c) => c?.close()));
}

/** Whether `node` serves queue `q`'s slot (as last read). */
export function serves(node: ClusterNode, q: string): boolean {
  const s = slot(queueKey(q, ""));
  return node.slots.some(([lo, hi]) => s >= lo && s <= hi);
}

/**
 * A throwaway local Valkey Cluster — for the tests, the fault experiments, the harness, the stand
 * and the bench — on `startValkey` (test/support/valkey.ts): N primaries (default 3) and R
 * replicas per primary (default 0), every node a real valkey-server on 127.0.0.1 in its own temp
 * dir, joined by `valkey-cli --cluster create`. Resolves once the cluster is healthy (see
 * `healthy()`).
 *
 *   const cluster = await startCluster({ module: modulePath() });   // 3 module primaries
 *   const owner = cluster.ownerOf(slot("emq:{orders}:pending"));     // the primary of that slot
 *   await cluster.moveSlot(9051, cluster.primaries()[0]!);           // legacy, key by key
 *   await cluster.stop();                                             // every node, by pid
 *
 * Every node runs with `cluster-node-timeout` 3000 ms (a failover within seconds),
 * `cluster-allow-replica-migration no` (a primary that gives its last slot away stays a primary)
 * and `repl-ping-replica-period 1` (`CLUSTER SLOTS` lists a replica once its offset is not 0,
 * which on an idle primary takes its first replication ping).
 *
 * `ownerOf`, `primaries()` and `replicas(of)` read the topology as last seen: `moveSlot`,
 * `reshard`, `addNode` and `healthy` read it again; after a failover, `refresh()` does.
 */
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import type { RespArg, RespReply } from "../test/support/resp.js";
import { startValkey, type ValkeyServer } from "../test/support/valkey.js";
import {
  infoField,
  type Place,
  parseClusterNodes,
  parseClusterSlots,
  slotMapText,
} from "./cluster-topology.js";

export { parseClusterNodes } from "./cluster-topology.js";

const run = promisify(execFile);

interface StartClusterOptions {
  /** Primaries, each an equal share of the slots: at least 3 (`--cluster create` refuses fewer); default 3. */
  primaries?: number;
  /** Replicas per primary. Default 0. */
  replicas?: number;
  /** A module (.so) every node loads; or per node index (primaries 0 … primaries−1, then replicas). */
  module?: string | ((index: number) => string | undefined);
  /** The arguments every module node loads the module with (e.g. `["timers", "no"]`). */
  moduleArgs?: string[];
  /** appendonly yes + appendfsync always on every node. */
  aof?: boolean;
  /** `cluster-node-timeout`: how long a node may be unreachable before it is failed over. Default 3000. */
  nodeTimeoutMs?: number;
  /** Extra server arguments for every node (after the defaults, so they win). */
  extraArgs?: string[];
  /** Bound for the cluster to form (every wait); default 30000 ms. */
  timeoutMs?: number;
}

/** One node of the cluster: its server (`cli`, `restart`, `crash`, `stop` …) and its place. */
export interface ClusterNode extends ValkeyServer {
  /** The node's cluster id (40 hex characters), kept across restarts (nodes.conf). */
  readonly id: string;
  /** "primary" or "replica", as last read. */
  readonly role: "primary" | "replica";
  /** The slot ranges it serves as a primary ([first, last], inclusive), as last read. */
  readonly slots: readonly (readonly [number, number])[];
  /** Its primary's id, for a replica. */
  readonly primaryId: string | undefined;
}

export interface LocalCluster {
  /** Every node, in start order (nodes added later at the end). */
  readonly nodes: readonly ClusterNode[];
  /** The nodes that are primaries serving slots, as last read. */
  primaries(): ClusterNode[];
  /** The replicas, as last read; of one primary when given. */
  replicas(of?: ClusterNode): ClusterNode[];
  /** The address of every node started with the cluster, for a cluster client's seeds. */
  readonly seeds: readonly { host: string; port: number }[];
  /** The primary serving `slot`, as last read. */
  ownerOf(slot: number): ClusterNode;
  /** Reads the topology again (roles, slots) from the first node that answers. */
  refresh(): Promise<void>;
  /** The nodes that answer `PING` now. */
  running(): Promise<ClusterNode[]>;
  /**
   * Waits until every running node reports cluster_state:ok, knows every node, flags none of
   * the running ones as failing, serves the same slot map, lists every synced replica in
   * `CLUSTER SLOTS`, and every running replica is synced; then reads the topology again.
   */
  healthy(): Promise<void>;
  /**
   * Moves `slot` and its keys to the primary `to` the legacy way (`SETSLOT IMPORTING` /
   * `MIGRATING`, `MIGRATE` 100 keys at a time, `SETSLOT NODE` everywhere) and waits until every
   * running node agrees.
   */
  moveSlot(slot: number, to: ClusterNode): Promise<void>;
  /**
   * `valkey-cli --cluster reshard`: moves `count` slots — the lowest `from` serves — and their
   * keys (`pipeline` keys per `MIGRATE`, default 10) from `from` to `to`, then waits until every
   * running node agrees. Resolves with the slots moved.
   */
  reshard(from: ClusterNode, to: ClusterNode, count: number, opts?: { pipeline?: number }): Promise<number[]>;
  /**
   * Valkey 9's atomic slot migration: `CLUSTER MIGRATESLOTS SLOTSRANGE <first> <last> NODE <to>`
   * sent to `from`, then `CLUSTER GETSLOTMIGRATIONS` polled there until the job succeeded (an
   * error names its state and message when it failed or was cancelled); then waits until every
   * running node agrees that `to` serves them.
   */
  migrateSlots(from: ClusterNode, to: ClusterNode, first: number, last: number): Promise<void>;
  /** Starts a fresh node (no slots, the module if given) and meets it; resolves once every running node knows it. */
  addNode(opts?: { module?: string }): Promise<ClusterNode>;
  /** Stops every node (by pid) and removes their dirs. Idempotent. */
  stop(): Promise<void>;
}

/** A started server and its place in the cluster. */
class Node implements ClusterNode {
  place: Place = { id: "", role: "primary", slots: [], primaryId: undefined };
  constructor(readonly server: ValkeyServer) {}
  get id(): string {
    return this.place.id;
  }
  get role(): "primary" | "replica" {
    return this.place.role;
  }
  get slots(): readonly (readonly [number, number])[] {
    return this.place.slots;
  }
  get primaryId(): string | undefined {
    return this.place.primaryId;
  }
  get host(): string {
    return this.server.host;
  }
  get port(): number {
    return this.server.port;
  }
  get pid(): number {
    return this.server.pid;
  }
  get dir(): string {
    return this.server.dir;
  }
  get url(): string {
    return this.server.url;
  }
  get clusterPort(): number | undefined {
    return this.server.clusterPort;
  }
  stop(): Promise<void> {
    return this.server.stop();
  }
  restart(): Promise<void> {
    return this.server.restart();
  }
  crash(): Promise<void> {
    return this.server.crash();
  }
  cli(...args: RespArg[]): Promise<RespReply> {
    return this.server.cli(...args);
  }
  logTail(lines?: number): string {
    return this.server.logTail(lines);
  }
}

interface NodeSetup {
  module: string | undefined;
  moduleArgs?: string[];
  aof: boolean;
  nodeTimeoutMs: number;
  extraArgs: string[];
}

async function startNode(setup: NodeSetup): Promise<Node> {
  const server = await startValkey({
    cluster: "join",
    ...(setup.module === undefined ? {} : { module: setup.module, moduleArgs: setup.moduleArgs ?? [] }),
    aof: setup.aof,
    extraArgs: [
      ...["--cluster-node-timeout", String(setup.nodeTimeoutMs)],
      ...["--cluster-allow-replica-migration", "no", "--repl-ping-replica-period", "1"],
      ...setup.extraArgs,
    ],
  });
  return new Node(server);
}

class Cluster implements LocalCluster {
  readonly seeds: readonly { host: string; port: number }[];
  private stopped: Promise<void> | null = null;

  constructor(
    readonly nodes: Node[],
    private readonly setup: Omit<NodeSetup, "module">,
    private readonly timeoutMs: number,
  ) {
    this.seeds = nodes.map((n) => ({ host: n.host, port: n.port }));
  }

  primaries(): ClusterNode[] {
    return this.nodes.filter((n) => n.role === "primary" && n.slots.length > 0);
  }

  replicas(of?: ClusterNode): ClusterNode[] {
    return this.nodes.filter((n) => n.role === "replica" && (of === undefined || n.primaryId === of.id));
  }

  ownerOf(slot: number): ClusterNode {
    if (!Number.isInteger(slot) || slot < 0 || slot > 16383) throw new RangeError(`no slot ${slot}`);
    const owner = this.primaries().find((n) => n.slots.some(([lo, hi]) => slot >= lo && slot <= hi));
    if (!owner) throw new Error(`no primary serves slot ${slot} (refresh() after a topology change?)`);
    return owner;
  }

  async running(): Promise<Node[]> {
    const up = await Promise.all(
      this.nodes.map((n) =>
        n.cli("PING").then(
          () => true,
          () => false,
        ),
      ),
    );
    return this.nodes.filter((_, i) => up[i]);
  }

  async refresh(): Promise<void> {
    let last: unknown;
    for (const node of await this.running()) {
      try {
        const places = parseClusterNodes(String(await node.cli("CLUSTER", "NODES")));
        for (const n of this.nodes) {
          const place = places.get(`${n.host}:${n.port}`);
          if (place) n.place = place;
        }
        return;
      } catch (err) {
        last = err;
      }
    }
    throw new Error(`no node answered CLUSTER NODES: ${String(last)}`);
  }

  /** Polls `check` until it is true, or throws `what` after the bound. */
  private async until(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`the cluster ${what} within ${this.timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** Every running node serves the same slot map. */
  private async agreed(): Promise<boolean> {
    const maps = new Set<string>();
    for (const node of await this.running()) {
      maps.add(slotMapText(parseClusterSlots(await node.cli("CLUSTER", "SLOTS"))));
    }
    return maps.size === 1;
  }

  async healthy(): Promise<void> {
    const n = this.nodes.length;
    await this.until("did not reach cluster_state:ok on every running node, knowing every node", async () => {
      const running = await this.running();
      const up = new Set(running.map((r) => `${r.host}:${r.port}`));
      for (const node of running) {
        if (infoField(await node.cli("CLUSTER", "INFO"), "cluster_state") !== "ok") return false;
        const places = parseClusterNodes(String(await node.cli("CLUSTER", "NODES")));
        if (places.size !== n) return false;
        for (const [addr, p] of places) {
          if (!up.has(addr)) continue;
          if (p.flags.some((f) => ["handshake", "noaddr", "fail", "fail?"].includes(f))) return false;
        }
      }
      return this.agreed();
    });
    await this.refresh();
    await this.until("did not sync every replica, or list it in CLUSTER SLOTS", async () => {
      const running = await this.running();
      const synced = new Map<number, number>(); // primary port → synced replicas
      for (const replica of running.filter((r) => r.role === "replica")) {
        if (infoField(await replica.cli("INFO", "replication"), "master_link_status") !== "up") return false;
        const primary = this.nodes.find((p) => p.id === replica.primaryId);
        if (primary) synced.set(primary.port, (synced.get(primary.port) ?? 0) + 1);
      }
      for (const node of running) {
        for (const range of parseClusterSlots(await node.cli("CLUSTER", "SLOTS"))) {
          if (range.replicas.length !== (synced.get(range.primary) ?? 0)) return false;
        }
      }
      return true;
    });
  }

  async moveSlot(slot: number, to: ClusterNode): Promise<void> {
    const from = this.ownerOf(slot);
    if (from === to) return;
    await to.cli("CLUSTER", "SETSLOT", slot, "IMPORTING", from.id);
    await from.cli("CLUSTER", "SETSLOT", slot, "MIGRATING", to.id);
    for (;;) {
      const keys = (await from.cli("CLUSTER", "GETKEYSINSLOT", slot, 100)) as string[];
      if (keys.length === 0) break;
      await from.cli("MIGRATE", to.host, to.port, "", 0, 5000, "KEYS", ...keys);
    }
    const others = (await this.running()).filter((n) => n !== to && n !== from);
    for (const node of [to, from, ...others]) {
      await node.cli("CLUSTER", "SETSLOT", slot, "NODE", to.id).catch(() => {});
    }
    await this.until(`did not agree that ${to.port} serves slot ${slot}`, () => this.agreed());
    await this.refresh();
  }

  async reshard(from: ClusterNode, to: ClusterNode, count: number, opts: { pipeline?: number } = {}) {
    const before = new Set(servedBy(from));
    const args = ["--cluster", "reshard", `${from.host}:${from.port}`];
    args.push("--cluster-from", from.id, "--cluster-to", to.id, "--cluster-slots", String(count));
    args.push("--cluster-pipeline", String(opts.pipeline ?? 10), "--cluster-yes");
    await run("valkey-cli", args, { timeout: this.timeoutMs, maxBuffer: 64 << 20 }).catch(
      (err: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`valkey-cli --cluster reshard failed: ${err.message}\n${err.stderr ?? ""}`);
      },
    );
    await this.until(`did not agree on the slot map after resharding`, () => this.agreed());
    await this.refresh();
    return servedBy(to).filter((s) => before.has(s));
  }

  async migrateSlots(from: ClusterNode, to: ClusterNode, first: number, last: number) {
    await from.cli("CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", first, last, "NODE", to.id);
    const range = `${first}-${last}`;
    let failure: string | undefined;
    await this.until(`did not finish the atomic migration of slots ${range}`, async () => {
      const jobs = (await from.cli("CLUSTER", "GETSLOTMIGRATIONS")) as unknown[][];
      const fields = jobs.map((job) => new Map(pairs(job))).filter((job) => job.get("slot_ranges") === range);
      const state = fields.at(-1)?.get("state");
      if (state === "failed" || state === "cancelled") failure = `${state}: ${fields.at(-1)?.get("message")}`;
      return state === "success" || failure !== undefined;
    });
    if (failure !== undefined) throw new Error(`atomic migration of slots ${range} to ${to.port} ${failure}`);
    // the source knows at once; the others learn it from the cluster bus
    await this.until(`did not agree that ${to.port} serves slots ${range}`, async () => {
      if (!(await this.agreed())) return false;
      await this.refresh();
      return to.slots.some(([lo, hi]) => lo <= first && last <= hi);
    });
  }

  async addNode(opts: { module?: string } = {}): Promise<ClusterNode> {
    const node = await startNode({ ...this.setup, module: opts.module });
    this.nodes.push(node);
    const seed = (await this.running())[0]!;
    await seed.cli("CLUSTER", "MEET", node.host, node.port, node.clusterPort!);
    await this.until("did not get to know the new node", async () => {
      for (const n of await this.running()) {
        if (!String(await n.cli("CLUSTER", "NODES")).includes(`:${node.port}@`)) return false;
      }
      // A node that owns no slot yet still waits for its cluster_state:ok (MIGRATE into it is
      // refused CLUSTERDOWN until then).
      return infoField(await node.cli("CLUSTER", "INFO"), "cluster_state") === "ok";
    });
    await this.refresh();
    return node;
  }

  stop(): Promise<void> {
    this.stopped ??= Promise.all(this.nodes.map((n) => n.stop())).then(() => {});
    return this.stopped;
  }
}

/** Every slot `node` serves (as last read). */
function servedBy(node: ClusterNode): number[] {
  return node.slots.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i));
}

/**
 * Starts `primaries × (1 + replicas)` nodes (cluster-enabled, no slots), joins them with
 * `valkey-cli --cluster create … --cluster-replicas R --cluster-yes` (slots split evenly over
 * the primaries, which are the first `primaries` nodes), and resolves once the cluster is
 * healthy. Rejects (every node stopped) when it does not form in time.
 */
export async function startCluster(opts: StartClusterOptions = {}): Promise<LocalCluster> {
  const primaries = opts.primaries ?? 3;
  const replicas = opts.replicas ?? 0;
  if (!Number.isInteger(primaries) || primaries < 3) throw new RangeError("primaries must be at least 3");
  if (!Number.isInteger(replicas) || replicas < 0) throw new RangeError("replicas must be 0 or more");
  const setup = {
    aof: opts.aof ?? false,
    nodeTimeoutMs: opts.nodeTimeoutMs ?? 3000,
    extraArgs: opts.extraArgs ?? [],
    ...(opts.moduleArgs === undefined ? {} : { moduleArgs: opts.moduleArgs }),
  };
  const moduleOf = (i: number) => (typeof opts.module === "function" ? opts.module(i) : opts.module);
  const started = await Promise.allSettled(
    Array.from({ length: primaries * (1 + replicas) }, (_, i) =>
      startNode({ ...setup, module: moduleOf(i) }),
    ),
  );
  const cluster = new Cluster(
    started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : [])),
    setup,
    opts.timeoutMs ?? 30_000,
  );
  try {
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    const addresses = cluster.nodes.map((s) => `${s.host}:${s.port}`);
    await run(
      "valkey-cli",
      ["--cluster", "create", ...addresses, "--cluster-replicas", String(replicas), "--cluster-yes"],
      { timeout: opts.timeoutMs ?? 30_000 },
    ).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(
        `valkey-cli --cluster create failed: ${err.message}\n${err.stdout ?? ""}${err.stderr ?? ""}`,
      );
    });
    await cluster.healthy();
    const first = cluster.nodes.slice(0, primaries);
    if (cluster.primaries().length !== primaries || first.some((n) => n.role !== "primary")) {
      throw new Error(`expected nodes 0…${primaries - 1} as the primaries`);
    }
    return cluster;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** A flat `[field, value, field, value…]` reply as string pairs. */
function pairs(flat: unknown[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([String(flat[i]), String(flat[i + 1])]);
  return out;
}

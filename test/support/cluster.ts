/**
 * A throwaway local Valkey Cluster for tests, on `startValkey` (test/support/valkey.ts): N
 * primaries (default 3) and R replicas per primary (default 0), every node a real valkey-server
 * on 127.0.0.1 in its own temp dir, joined by `valkey-cli --cluster create`. Resolves once every
 * node reports `cluster_state:ok`, knows every other node, and every replica is synced.
 *
 *   const cluster = await startCluster({ module: modulePath() });   // 3 module primaries
 *   const owner = cluster.ownerOf(slot("emq:{orders}:pending"));     // the primary of that slot
 *   await owner.cli("EMQ.VERSION");
 *   await cluster.stop();                                           // every node, by pid
 *
 * `ownerOf` and `replicas(of)` read the topology as last seen: after a failover or a reshard,
 * `refresh()` reads it again (from any node that answers).
 */
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import type { RespArg, RespReply } from "./resp.js";
import { startValkey, type ValkeyServer } from "./valkey.js";

const run = promisify(execFile);

export interface StartClusterOptions {
  /**
   * Primaries, each owning an equal share of the 16384 slots. Default 3, at least 3
   * (`valkey-cli --cluster create` refuses fewer; so would a failover's vote).
   */
  primaries?: number;
  /** Replicas per primary. Default 0. */
  replicas?: number;
  /** Path of a module (.so) every node loads. */
  module?: string;
  /** appendonly yes + appendfsync always on every node. */
  aof?: boolean;
  /** Extra server arguments for every node, e.g. ["--cluster-node-timeout", "2000"]. */
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
  /** Every node, in start order. */
  readonly nodes: readonly ClusterNode[];
  /** The nodes that are primaries, as last read. */
  primaries(): ClusterNode[];
  /** The replicas, as last read; of one primary when given. */
  replicas(of?: ClusterNode): ClusterNode[];
  /** Every node's address, for a cluster client's seeds. */
  readonly seeds: readonly { host: string; port: number }[];
  /** The primary serving `slot`, as last read. */
  ownerOf(slot: number): ClusterNode;
  /** Reads the topology again (roles, slots) from the first node that answers. */
  refresh(): Promise<void>;
  /** Waits until every running node reports cluster_state:ok and every replica is synced. */
  healthy(): Promise<void>;
  /** Stops every node (by pid) and removes their dirs. Idempotent. */
  stop(): Promise<void>;
}

interface Place {
  id: string;
  role: "primary" | "replica";
  slots: [number, number][];
  primaryId: string | undefined;
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

/** `CLUSTER NODES` parsed: per node address (`host:port`), its place; and the flags seen. */
export function parseClusterNodes(text: string): Map<string, Place & { flags: string[] }> {
  const out = new Map<string, Place & { flags: string[] }>();
  for (const line of text.split("\n")) {
    const f = line.trim().split(" ");
    if (f.length < 8) continue;
    const [id, address, flags, primary] = f as [string, string, string, string];
    const addr = address.split("@")[0]!;
    const flagList = flags.split(",");
    const slots: [number, number][] = [];
    for (const range of f.slice(8)) {
      if (range.startsWith("[")) continue; // a slot being migrated or imported
      const [lo, hi] = range.split("-").map(Number);
      slots.push([lo!, hi ?? lo!]);
    }
    const role = flagList.includes("slave") ? "replica" : "primary";
    out.set(addr, { id, role, slots, primaryId: primary === "-" ? undefined : primary, flags: flagList });
  }
  return out;
}

function infoField(info: RespReply, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, "m").exec(String(info))?.[1]?.trim();
}

class Cluster implements LocalCluster {
  readonly seeds: readonly { host: string; port: number }[];
  private stopped: Promise<void> | null = null;

  constructor(
    readonly nodes: readonly Node[],
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

  async refresh(): Promise<void> {
    let last: unknown;
    for (const node of this.nodes) {
      try {
        this.place(String(await node.cli("CLUSTER", "NODES")));
        return;
      } catch (err) {
        last = err;
      }
    }
    throw new Error(`no node answered CLUSTER NODES: ${String(last)}`);
  }

  private place(nodesText: string): void {
    const places = parseClusterNodes(nodesText);
    for (const node of this.nodes) {
      const place = places.get(`${node.host}:${node.port}`);
      if (place) node.place = place;
    }
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

  async healthy(): Promise<void> {
    const n = this.nodes.length;
    await this.until("did not reach cluster_state:ok on every node, knowing every node", async () => {
      for (const node of this.nodes) {
        if (infoField(await node.cli("CLUSTER", "INFO"), "cluster_state") !== "ok") return false;
        const places = parseClusterNodes(String(await node.cli("CLUSTER", "NODES")));
        if (places.size !== n) return false;
        for (const p of places.values()) {
          if (p.flags.some((f) => ["handshake", "noaddr", "fail", "fail?"].includes(f))) return false;
        }
      }
      return true;
    });
    await this.refresh();
    await this.until("did not sync every replica", async () => {
      for (const replica of this.replicas()) {
        if (infoField(await replica.cli("INFO", "replication"), "master_link_status") !== "up") return false;
      }
      return true;
    });
  }

  stop(): Promise<void> {
    this.stopped ??= Promise.all(this.nodes.map((n) => n.stop())).then(() => {});
    return this.stopped;
  }
}

/**
 * Starts `primaries × (1 + replicas)` nodes (cluster-enabled, no slots), joins them with
 * `valkey-cli --cluster create … --cluster-replicas R --cluster-yes` (slots split evenly over
 * the primaries), and resolves once the cluster is healthy (see {@link LocalCluster.healthy}).
 * Rejects (every node stopped) when it does not form in time.
 */
export async function startCluster(opts: StartClusterOptions = {}): Promise<LocalCluster> {
  const primaries = opts.primaries ?? 3;
  const replicas = opts.replicas ?? 0;
  if (!Number.isInteger(primaries) || primaries < 3) throw new RangeError("primaries must be at least 3");
  if (!Number.isInteger(replicas) || replicas < 0) throw new RangeError("replicas must be 0 or more");
  const started = await Promise.allSettled(
    Array.from({ length: primaries * (1 + replicas) }, () =>
      startValkey({
        cluster: "join",
        ...(opts.module === undefined ? {} : { module: opts.module }),
        aof: opts.aof ?? false,
        extraArgs: opts.extraArgs ?? [],
      }),
    ),
  );
  const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const cluster = new Cluster(
    servers.map((s) => new Node(s)),
    opts.timeoutMs ?? 30_000,
  );
  try {
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    const addresses = servers.map((s) => `${s.host}:${s.port}`);
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
    if (cluster.primaries().length !== primaries) {
      throw new Error(`expected ${primaries} primaries, found ${cluster.primaries().length}`);
    }
    return cluster;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

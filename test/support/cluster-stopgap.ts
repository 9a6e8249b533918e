/**
 * A local Valkey Cluster for the connector's cluster tests, until `test/support/cluster.ts`
 * (`startCluster`, on `startValkey({ cluster: "join" })`) lands: N primaries, R replicas per
 * primary, optionally the module on every node or on some. Real `valkey-server` processes on
 * loopback, joined with `CLUSTER MEET`, slots split evenly, replicas attached with
 * `CLUSTER REPLICATE`; it resolves once every node agrees on the slot map and every replica is
 * synced. `moveSlot` moves one slot the legacy way (IMPORTING/MIGRATING, `MIGRATE`, `SETSLOT
 * NODE`); `addNode` starts a fresh node and meets it.
 *
 * Tests call it through one small function of their own, so the switch to `startCluster` is one line.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { RespReply } from "./resp.js";
import { freePort, startValkey, type ValkeyServer } from "./valkey.js";

export interface TestClusterOptions {
  primaries?: number;
  /** Replicas per primary. */
  replicas?: number;
  /** The module on every node (a path), or per node index (primaries first, then replicas). */
  module?: string | ((index: number) => string | undefined);
  aof?: boolean;
}

export interface TestCluster {
  readonly primaries: ValkeyServer[];
  /** `replicas[i]` replicates `primaries[i % primaries.length]`. */
  readonly replicas: ValkeyServer[];
  /** Every node started, added ones included. */
  readonly nodes: ValkeyServer[];
  /** Where a client starts: the first primary. */
  readonly seeds: { host: string; port: number }[];
  idOf(node: ValkeyServer): Promise<string>;
  /** The primary that owns `slot` now (as that primary says). */
  ownerOf(slot: number): Promise<ValkeyServer>;
  /** Moves `slot` and its keys to `to` (legacy migration), and waits until every primary agrees. */
  moveSlot(slot: number, to: ValkeyServer): Promise<void>;
  /** Starts a fresh node (no slots), meets it, and waits until every node knows it. */
  addNode(opts?: { module?: string }): Promise<ValkeyServer>;
  stop(): Promise<void>;
}

const SLOTS = 16384;

function field(info: RespReply, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, "m").exec(String(info))?.[1]?.trim();
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`test cluster: ${what} within ${ms} ms`);
    await sleep(50);
  }
}

/** Cluster bus ports of the nodes started here (`clusterPort` is set only by `startValkey({ cluster })`). */
const busPorts = new Map<ValkeyServer, number>();

async function startNode(module: string | undefined, aof: boolean): Promise<ValkeyServer> {
  const bus = await freePort();
  const node = await startValkey({
    ...(module === undefined ? {} : { module }),
    aof,
    extraArgs: [
      ...["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"],
      ...["--cluster-port", String(bus), "--cluster-node-timeout", "3000"],
      ...["--cluster-allow-replica-migration", "no"],
      // CLUSTER SLOTS lists a replica once its replication offset is not 0, which on an idle
      // primary takes its first replication PING (every 10 s by default).
      ...["--repl-ping-replica-period", "1"],
    ],
  });
  busPorts.set(node, bus);
  return node;
}

function meet(seed: ValkeyServer, node: ValkeyServer): Promise<RespReply> {
  return seed.cli("CLUSTER", "MEET", node.host, node.port, busPorts.get(node)!);
}

function knownNodes(nodes: RespReply): number {
  return String(nodes)
    .split("\n")
    .filter((line) => line.trim().length > 0 && !/\b(handshake|noaddr)\b/.test(line)).length;
}

/** The nodes that answer (a test may have stopped some). */
async function alive(nodes: ValkeyServer[]): Promise<ValkeyServer[]> {
  const up = await Promise.all(
    nodes.map((n) =>
      n.cli("PING").then(
        () => true,
        () => false,
      ),
    ),
  );
  return nodes.filter((_, i) => up[i]);
}

export async function startTestCluster(opts: TestClusterOptions = {}): Promise<TestCluster> {
  const nPrimaries = opts.primaries ?? 3;
  const perPrimary = opts.replicas ?? 0;
  const moduleOf = (i: number) => (typeof opts.module === "function" ? opts.module(i) : opts.module);
  const total = nPrimaries * (1 + perPrimary);
  const nodes = await Promise.all(
    Array.from({ length: total }, (_, i) => startNode(moduleOf(i), opts.aof ?? false)),
  );
  const primaries = nodes.slice(0, nPrimaries);
  const replicas = nodes.slice(nPrimaries);
  const ids = new Map<ValkeyServer, string>();
  const idOf = async (node: ValkeyServer) => {
    let id = ids.get(node);
    if (!id) {
      id = String(await node.cli("CLUSTER", "MYID"));
      ids.set(node, id);
    }
    return id;
  };
  const all = [...nodes];
  const cluster: TestCluster = {
    primaries,
    replicas,
    nodes: all,
    seeds: [{ host: primaries[0]!.host, port: primaries[0]!.port }],
    idOf,
    async ownerOf(slot) {
      for (const node of await alive(all)) {
        const ranges = (await node.cli("CLUSTER", "SLOTS")) as RespReply[][];
        for (const range of ranges) {
          if (Number(range[0]) <= slot && slot <= Number(range[1])) {
            const port = Number((range[2] as RespReply[])[1]);
            const owner = all.find((n) => n.port === port);
            if (owner) return owner;
          }
        }
      }
      throw new Error(`test cluster: nobody owns slot ${slot}`);
    },
    async moveSlot(slot, to) {
      const from = await cluster.ownerOf(slot);
      if (from === to) return;
      const [fromId, toId] = [await idOf(from), await idOf(to)];
      await to.cli("CLUSTER", "SETSLOT", slot, "IMPORTING", fromId);
      await from.cli("CLUSTER", "SETSLOT", slot, "MIGRATING", toId);
      for (;;) {
        const keys = (await from.cli("CLUSTER", "GETKEYSINSLOT", slot, 100)) as string[];
        if (keys.length === 0) break;
        await from.cli("MIGRATE", to.host, to.port, "", 0, 5000, "KEYS", ...keys);
      }
      for (const node of [to, from, ...(await alive(all)).filter((n) => n !== to && n !== from)]) {
        await node.cli("CLUSTER", "SETSLOT", slot, "NODE", toId).catch(() => {});
      }
      await until(`slot ${slot} owned by ${to.port} everywhere`, async () => {
        for (const node of await alive(all)) {
          const ranges = (await node.cli("CLUSTER", "SLOTS")) as RespReply[][];
          const range = ranges.find((r) => Number(r[0]) <= slot && slot <= Number(r[1]));
          if (!range || Number((range[2] as RespReply[])[1]) !== to.port) return false;
        }
        return true;
      });
    },
    async addNode(o = {}) {
      const node = await startNode(o.module, opts.aof ?? false);
      all.push(node);
      await meet(primaries[0]!, node);
      await until("the new node is known everywhere", async () => {
        const live = await alive(all);
        for (const n of live)
          if (!String(await n.cli("CLUSTER", "NODES")).includes(`:${node.port}@`)) return false;
        // A node that owns no slot yet still waits for its cluster_state:ok (MIGRATE into it
        // is refused CLUSTERDOWN until then).
        return field(await node.cli("CLUSTER", "INFO"), "cluster_state") === "ok";
      });
      return node;
    },
    async stop() {
      await Promise.all(all.map((n) => n.stop()));
      for (const n of all) busPorts.delete(n);
    },
  };
  try {
    const share = Math.floor(SLOTS / nPrimaries);
    await Promise.all(
      primaries.map(async (node, i) => {
        const last = i === nPrimaries - 1 ? SLOTS - 1 : (i + 1) * share - 1;
        await node.cli("CLUSTER", "SET-CONFIG-EPOCH", i + 1);
        await node.cli("CLUSTER", "ADDSLOTSRANGE", i * share, last);
      }),
    );
    for (const node of nodes.slice(1)) {
      await meet(primaries[0]!, node);
    }
    await until("every node knows every node", async () => {
      for (const n of nodes) if (knownNodes(await n.cli("CLUSTER", "NODES")) !== nodes.length) return false;
      return true;
    });
    await Promise.all(
      replicas.map(async (node, i) =>
        node.cli("CLUSTER", "REPLICATE", await idOf(primaries[i % nPrimaries]!)),
      ),
    );
    await until("cluster_state:ok, replicas synced, one slot map", async () => {
      for (const n of nodes) {
        if (field(await n.cli("CLUSTER", "INFO"), "cluster_state") !== "ok") return false;
      }
      for (const r of replicas) {
        if (field(await r.cli("INFO", "replication"), "master_link_status") !== "up") return false;
      }
      for (const n of nodes) {
        const ranges = (await n.cli("CLUSTER", "SLOTS")) as RespReply[][];
        if (ranges.length !== nPrimaries || ranges.some((r) => r.length !== 3 + perPrimary)) return false;
      }
      return true;
    });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

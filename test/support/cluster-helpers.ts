/**
 * What the cluster tests share: the one function that starts a local cluster (switch it to
 * `startCluster` from `test/support/cluster.ts` when that lands), queue names placed on chosen
 * shards, the `INFO errorstats` counts of every node, and whether the module's native fence
 * admits verbs on every shard yet.
 */
import { type Connection, Queue } from "../../src/index.js";
import { queueKey, slot } from "../../src/protocol.js";
import { startTestCluster, type TestCluster, type TestClusterOptions } from "./cluster-stopgap.js";
import type { RespReply } from "./resp.js";
import type { ValkeyServer } from "./valkey.js";

export type { TestCluster } from "./cluster-stopgap.js";

/** A local cluster for one test file. */
export function clusterForTests(opts: TestClusterOptions): Promise<TestCluster> {
  return startTestCluster(opts);
}

export const label = (node: ValkeyServer) => `${node.host}:${node.port}`;

/** The slot ranges a primary owns, as it says (`CLUSTER SLOTS`). */
export async function rangesOf(node: ValkeyServer): Promise<[number, number][]> {
  const ranges = (await node.cli("CLUSTER", "SLOTS")) as RespReply[][];
  return ranges
    .filter((r) => Number((r[2] as RespReply[])[1]) === node.port)
    .map((r) => [Number(r[0]), Number(r[1])]);
}

/** The first queue name `<prefix><n>` whose slot lies in `ranges`. */
export function queueIn(ranges: [number, number][], prefix: string): string {
  for (let n = 0; ; n++) {
    const name = `${prefix}${n}`;
    const s = slot(queueKey(name, ""));
    if (ranges.some(([from, to]) => from <= s && s <= to)) return name;
  }
}

/** The first queue name `<prefix><n>` in slot `at`. */
export function queueInSlot(at: number, prefix: string): string {
  return queueIn([[at, at]], prefix);
}

/** One queue name per primary, each on that primary's shard. */
export async function queuePerShard(cluster: TestCluster, prefix: string): Promise<string[]> {
  const names: string[] = [];
  for (const [i, primary] of cluster.primaries.entries()) {
    names.push(queueIn(await rangesOf(primary), `${prefix}${i}-`));
  }
  return names;
}

/** `errorstat_<CODE>` counts of one node. */
export async function errorstats(node: ValkeyServer): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of String(await node.cli("INFO", "errorstats")).split(/\r?\n/)) {
    const m = /^errorstat_(\w+):count=(\d+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** `errorstat_MOVED` summed over every node. */
export async function movedCount(nodes: readonly ValkeyServer[]): Promise<number> {
  let n = 0;
  for (const node of nodes) n += (await errorstats(node)).MOVED ?? 0;
  return n;
}

export async function resetStats(nodes: readonly ValkeyServer[]): Promise<void> {
  for (const node of nodes) await node.cli("CONFIG", "RESETSTAT");
}

/**
 * Whether the module's native fence admits verbs of any slot (docs/cluster.md: on a cluster the
 * native fence passes on every module node). Until the module change lands, it reads
 * `{emq}:version` — and Valkey looks a command's keys up in the command's own slot, so only a verb
 * of slot 9051 (the record's) finds it: the wire-6 tests then place their queues in that slot,
 * and say so.
 */
export async function nativeFenceOnEveryShard(conn: Connection, cluster: TestCluster): Promise<boolean> {
  const holder = await cluster.ownerOf(slot("{emq}:version"));
  const other = cluster.primaries.find((p) => p !== holder)!;
  const q = new Queue(queueIn(await rangesOf(other), "probe-"), conn);
  try {
    const { id } = await q.add("probe");
    await q.remove(id);
    return true;
  } catch (err) {
    if (/^EMQWIRE/.test((err as Error).message)) {
      console.log(
        "# wire 6: the module's native fence still reads {emq}:version on a cluster: queues go to its slot",
      );
      return false;
    }
    throw err;
  }
}

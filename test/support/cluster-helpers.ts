/**
 * What the cluster tests (and the cluster fault experiments) share on top of `startCluster`:
 * queue names placed on chosen shards or slots, and the `INFO errorstats` counts of nodes.
 */
import { queueKey, slot } from "../../src/protocol.js";
import { parseErrorstats } from "../../tools/cluster-topology.js";
import type { ClusterNode, LocalCluster } from "./cluster.js";
import type { ValkeyServer } from "./valkey.js";

export const label = (node: { host: string; port: number }) => `${node.host}:${node.port}`;

/** The first queue name `<prefix><n>` whose slot lies in `ranges`. */
function queueIn(ranges: readonly (readonly [number, number])[], prefix: string): string {
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

/** The first queue name `<prefix><n>` on `node`'s shard (its slots as last read). */
export function queueOn(node: ClusterNode, prefix: string): string {
  return queueIn(node.slots, prefix);
}

/** One queue name per primary, each on that primary's shard (in `primaries()` order). */
export function queuePerShard(cluster: LocalCluster, prefix: string): string[] {
  return cluster.primaries().map((primary, i) => queueOn(primary, `${prefix}${i}-`));
}

/** `errorstat_<CODE>` counts of one node. */
export async function errorstats(node: ValkeyServer): Promise<Record<string, number>> {
  return parseErrorstats(await node.cli("INFO", "errorstats"));
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

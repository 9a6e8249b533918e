/**
 * Where a run's cases go. **Single**: one scratch server (harness/scratch.ts). **Cluster**
 * (`--cluster`): a local cluster of three module primaries (test/support/cluster.ts), each a
 * scratch node with its own client, wake subscriber and run_id; cases and generated sequences
 * go to the primaries in turn, each case's queues — script side and native side — named into
 * one slot of its primary (harness/placement.ts), so its every command reaches the slot's owner
 * and a lease-exact `MULTI … EXEC` holds both sides. `EMQ.INSTALL` cases go to the owner of
 * the brand key's slot. Two kinds of listed case are single-node by nature and do not run on
 * the cluster: the fence cases (the native fence passes there by the node's configuration, so
 * no brand can refuse it) and the replica guards (they start a replica of the scratch server).
 */
import { slot } from "../src/keyspace.js";
import { type LocalCluster, startCluster } from "../test/support/cluster.js";
import { modulePath } from "../tools/module-path.js";
import type { Bodies } from "./bodies.js";
import type { Case } from "./build.js";
import { changes, show } from "./compare.js";
import { Executors, type Fault, type Shard, type Variant } from "./executors.js";
import type { Tally } from "./report.js";
import { SCRATCH_AOF, SCRATCH_MODULE_ARGS, Scratch } from "./scratch.js";
import { VERSION_KEY } from "./verbs.js";

interface Stage {
  /** One line for the report: where the run ran. */
  readonly where: string;
  /** The executors a listed case runs on, or why it does not run on this stage. */
  forCase(c: Case): Executors | string;
  /** The executors of the next generated sequence. */
  next(): Executors;
  /** Lines for the report after the run (on a cluster: how the cases spread). */
  summary(): string[];
  /** No `EMQ.` in any AOF; every node's keyspace unchanged by a restart on its AOF. */
  durability(tally: Tally): Promise<void>;
  stop(): Promise<void>;
}

/** The single scratch server. */
export async function singleStage(
  bodies: Bodies,
  fault: Fault | null,
  variant: Variant = {},
): Promise<Stage> {
  const scratch = await Scratch.start();
  const ex = new Executors(scratch, bodies, fault, null, variant);
  return {
    where: `one scratch server (127.0.0.1:${scratch.port})`,
    forCase: () => ex,
    next: () => ex,
    summary: () => [],
    durability: (tally) => durability([scratch], tally, async () => {}),
    stop: () => scratch.stop(),
  };
}

/** Why a listed case does not run on a cluster; null when it does. */
export function clusterSkip(c: Case): string | null {
  if (/ fence: /.test(c.name)) return "fence cases (the native fence passes by configuration)";
  if (/ write guard: (read-only|writable) replica/.test(c.name))
    return "replica guards (a replica of one node)";
  return null;
}

/** A local cluster of three module primaries. */
export async function clusterStage(
  bodies: Bodies,
  fault: Fault | null,
  variant: Variant = {},
): Promise<Stage> {
  const module = modulePath();
  const cluster = await startCluster({
    primaries: 3,
    module,
    moduleArgs: SCRATCH_MODULE_ARGS,
    ...SCRATCH_AOF,
  });
  try {
    const primaries = cluster.primaries();
    const scratches = await Promise.all(primaries.map((node) => Scratch.attach(node, module)));
    const all = scratches.map(
      (scratch, i) => new Executors(scratch, bodies, fault, shardOf(cluster, i), variant),
    );
    const record = primaries.indexOf(cluster.ownerOf(slot(VERSION_KEY)));
    await scratches[record]!.install();
    let turn = 0;
    const runs = all.map(() => 0);
    const take = (i: number) => {
      runs[i]! += 1;
      return all[i]!;
    };
    const next = () => take(turn++ % all.length);
    return {
      where: `a cluster of ${all.length} module primaries (${primaries.map((p) => `127.0.0.1:${p.port}`).join(", ")})`,
      forCase: (c) => clusterSkip(c) ?? (c.name.startsWith("INSTALL") ? take(record) : next()),
      next,
      summary: () => [
        `cases and sequences per primary: ${primaries.map((p, i) => `127.0.0.1:${p.port} ${runs[i]}`).join(", ")}`,
      ],
      durability: (tally) => durability(scratches, tally, () => cluster.healthy()),
      async stop() {
        for (const s of scratches) await s.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** Primary `i`'s place: its address, its slots, and the owner of every slot. */
function shardOf(cluster: LocalCluster, i: number): Shard {
  const node = cluster.primaries()[i]!;
  const slots = node.slots.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, k) => lo + k));
  const address = (n: { host: string; port: number }) => `${n.host}:${n.port}`;
  return { self: address(node), slots, owner: (s) => address(cluster.ownerOf(s)) };
}

/**
 * No `EMQ.` (any case) in any node's AOF files; each node's whole keyspace unchanged by a
 * restart on its AOF (`healed`: what to await after the restarts before reading again).
 */
async function durability(
  nodes: readonly Scratch[],
  tally: Tally,
  healed: () => Promise<void>,
): Promise<void> {
  const label = (s: Scratch) => (nodes.length > 1 ? ` of 127.0.0.1:${s.port}` : "");
  for (const scratch of nodes) {
    const aof: string[] = [];
    for (const [file, bytes] of scratch.aofFiles()) {
      const text = bytes.toString("latin1");
      const at = text.search(/emq\./i);
      if (at >= 0)
        aof.push(
          `${file} holds an EMQ.* record at byte ${at}: ${show(text.slice(Math.max(0, at - 40), at + 60))}`,
        );
    }
    tally.add({
      verb: "durability: no EMQ.* in the AOF",
      verdict: aof.length ? "failed" : "equal",
      label: `AOF${label(scratch)}`,
      problems: aof,
    });
  }
  const before = await Promise.all(nodes.map((s) => s.keys.dumpAll()));
  for (const scratch of nodes) await scratch.restart();
  await healed();
  for (const [i, scratch] of nodes.entries()) {
    const after = await scratch.keys.dumpAll();
    const diff = changes(before[i]!, after);
    if (before[i]!.size === 0) diff.push("the keyspace was empty: nothing was checked");
    tally.add({
      verb: "durability: restart on the AOF",
      verdict: diff.length ? "failed" : "equal",
      label: `restart${label(scratch)} (${before[i]!.size} keys)`,
      problems: diff,
    });
  }
}

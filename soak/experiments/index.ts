/**
 * The fault experiments, by name: each runs on the wires it lists, with soak-size or suite-size
 * parameters, and returns an `Outcome` (the counts of the summary table).
 */
import type { Wire } from "../../src/index.js";
import { acl, aclDefaults } from "./acl.js";
import { batchKill, batchKillCluster, batchKillDefaults } from "./batch-kill.js";
import type { Outcome, Params } from "./common.js";
import { connectionCuts, connectionCutsDefaults } from "./connection-cuts.js";
import { failover, failoverDefaults } from "./failover.js";
import { fusedCuts, fusedCutsCluster, fusedCutsDefaults } from "./fused-cuts.js";
import { flowsAcrossShards, flowsDefaults } from "./flows.js";
import { memoryLimit, memoryLimitDefaults } from "./memory-limit.js";
import { moduleFuzz, moduleFuzzDefaults } from "./module-fuzz.js";
import { resharding, reshardingAtomic, reshardingDefaults } from "./resharding.js";
import { serverCrash, serverCrashDefaults } from "./server-crash.js";
import { workerKill, workerKillDefaults } from "./worker-kill.js";

export type { Outcome, Params } from "./common.js";
export type Size = "soak" | "suite";

export interface Experiment {
  name: string;
  /** What it does and what it must show, one line. */
  title: string;
  wires: readonly Wire[];
  defaults: Record<Size, Params>;
  /** The oldest Valkey major it runs on (8 unless said). */
  minValkey: number;
  run(wire: Wire, params: Params): Promise<Outcome>;
}

function experiment<P extends Params>(
  name: string,
  title: string,
  wires: readonly Wire[],
  defaults: Record<Size, P>,
  run: (wire: Wire, params: P) => Promise<Outcome>,
  minValkey = 8,
): Experiment {
  return { name, title, wires, defaults, minValkey, run: (wire, params) => run(wire, params as P) };
}

const BOTH: readonly Wire[] = [4, 6];

export const EXPERIMENTS: readonly Experiment[] = [
  experiment(
    "flows",
    "flows across shards, the relaying process SIGKILLed mid-way: every parent once, after all its children, 0 lost",
    BOTH,
    flowsDefaults,
    flowsAcrossShards,
  ),
  experiment(
    "server-crash",
    "SIGKILL the AOF server mid-load: 0 lost, 0 stuck",
    BOTH,
    serverCrashDefaults,
    serverCrash,
  ),
  experiment(
    "connection-cuts",
    "cut every connection every ~300 ms: all complete, the worker still runs",
    BOTH,
    connectionCutsDefaults,
    connectionCuts,
  ),
  experiment(
    "memory-limit",
    "over maxmemory: adds refused with OOM, the queue drains",
    BOTH,
    memoryLimitDefaults,
    memoryLimit,
  ),
  experiment(
    "module-fuzz",
    "random EMQ.* calls: 0 crashes, every malformed call refused, nothing written",
    [6],
    moduleFuzzDefaults,
    moduleFuzz,
  ),
  experiment("acl", "a user limited to queue a cannot touch queue b", BOTH, aclDefaults, acl),
  experiment(
    "worker-kill",
    "SIGKILL a worker process: 0 lost, re-runs only of held jobs",
    BOTH,
    workerKillDefaults,
    workerKill,
  ),
  experiment(
    "batch-kill",
    "SIGKILL a worker process holding two batches, or 100 slots: every held job back by its lease, completed once",
    BOTH,
    batchKillDefaults,
    batchKill,
  ),
  experiment(
    "batch-kill-cluster",
    "the same kills on a local cluster (the queue on one shard): every held job back by its lease, completed once",
    BOTH,
    batchKillDefaults,
    batchKillCluster,
  ),
  experiment(
    "fused-cuts",
    "cut the connection between a COMPLETENEXT / COMPLETEN and its reply (ran, or not): each once, leases back, no stall",
    BOTH,
    fusedCutsDefaults,
    fusedCuts,
  ),
  experiment(
    "fused-cuts-cluster",
    "the same cuts on a local cluster (a proxy per node, natMap): each once, leases back, no stall",
    BOTH,
    fusedCutsDefaults,
    fusedCutsCluster,
  ),
  experiment(
    "resharding",
    "valkey-cli --cluster reshard of busy queues' slots under load: 0 lost, 0 stuck, subscribers follow",
    BOTH,
    reshardingDefaults,
    resharding,
  ),
  experiment(
    "resharding-atomic",
    "CLUSTER MIGRATESLOTS (Valkey 9) of busy queues' slots under load: 0 lost, 0 stuck, no ASK or TRYAGAIN",
    BOTH,
    reshardingDefaults,
    reshardingAtomic,
    9,
  ),
  experiment(
    "failover",
    "SIGKILL a primary under load, its replica promoted: 0 durable adds lost, 0 stuck",
    BOTH,
    failoverDefaults,
    failover,
  ),
];

export function experimentNamed(name: string): Experiment {
  const found = EXPERIMENTS.find((e) => e.name === name);
  if (!found)
    throw new Error(`no experiment ${name}; there are: ${EXPERIMENTS.map((e) => e.name).join(", ")}`);
  return found;
}

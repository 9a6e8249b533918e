/**
 * The local cluster for tests: `startCluster` (tools/local-cluster.ts, shared with the fault
 * experiments, the harness, the stand and the bench), re-exported here where the tests and the
 * bench import it.
 */
export {
  type ClusterNode,
  type LocalCluster,
  parseClusterNodes,
  startCluster,
} from "../../tools/local-cluster.js";

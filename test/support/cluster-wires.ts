/**
 * One suite, two engines, on a cluster: `forEachClusterWire` runs the same tests against a local
 * 3-primary cluster of plain nodes (wire 4) and one of module nodes branded by `EMQ.INSTALL`
 * (wire 6), each with a connection over its seeds — the cluster twin of `forEachWire`.
 */
import { after, before, describe } from "node:test";
import { type Connection, connect, type Wire } from "../../src/index.js";
import { installModuleBrand } from "../../src/admin.js";
import { modulePath } from "../../tools/module-path.js";
import { type LocalCluster, startCluster } from "./cluster.js";
import { WIRES } from "./wires.js";

interface ClusterWireContext {
  wire: Wire;
  cluster: LocalCluster;
  conn: Connection;
}

export function forEachClusterWire(title: string, body: (ctx: () => ClusterWireContext) => void): void {
  for (const wire of WIRES) {
    describe(`${title} [wire ${wire}]`, () => {
      let ctx: ClusterWireContext | undefined;
      before(async () => {
        const cluster = await startCluster({ primaries: 3, ...(wire === 6 ? { module: modulePath() } : {}) });
        if (wire === 6) await installModuleBrand({ nodes: cluster.seeds });
        ctx = { wire, cluster, conn: await connect({ nodes: cluster.seeds, wire }) };
      });
      after(async () => {
        await ctx?.conn.close();
        await ctx?.cluster.stop();
      });
      body(() => ctx!);
    });
  }
}

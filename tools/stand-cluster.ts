/**
 * The stand on a cluster (`npm run stand -- --cluster`): the same enqueue + claim on a local
 * cluster of 3 plain primaries (wire 4, the scripts) and on one of 3 module primaries (wire 6,
 * `EMQ.*`), each primary watched by MONITOR from after the connect (so the fence is not shown);
 * prints the lines each primary received. Passes when every line reached the primary that owns
 * the queue's slot, and no other.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "../src/index.js";
import { claim, enqueue, newId, queueKey, SCRIPTS, slot } from "../src/protocol.js";
import { installModuleBrand } from "../src/admin.js";
import { monitor } from "../test/support/monitor.js";
import { startCluster } from "./local-cluster.js";
import { modulePath } from "./module-path.js";

const QUEUE = "quotes";
const PAYLOAD = '{"symbol":"EURUSD","bid":"1.08412"}';
const sources = new Map([...SCRIPTS.values()].map((s) => [s.source, `<${s.name}.lua source>`]));

function show(arg: string): string {
  if (arg === PAYLOAD) return "<payload>";
  if (/^[0-9a-f]{40}$/.test(arg)) return `${arg.slice(0, 8)}…`;
  return sources.get(arg) ?? (arg.length > 48 ? `${arg.slice(0, 40)}…` : arg);
}

/** One wire's run: the lines per primary; true when only the slot's owner received any, and it some. */
async function runOn(wire: 4 | 6, out: (line: string) => void): Promise<boolean> {
  const cluster = await startCluster(wire === 6 ? { module: modulePath() } : {});
  try {
    if (wire === 6) await installModuleBrand({ nodes: cluster.seeds });
    const conn = await connect({ nodes: cluster.seeds, wire });
    const primaries = cluster.primaries();
    const mons = await Promise.all(primaries.map((p) => monitor(p.port)));
    const id = newId();
    await enqueue(conn, QUEUE, PAYLOAD, { id });
    await claim(conn, QUEUE, 30_000);
    await sleep(50);
    await Promise.all(mons.map((m) => m.stop()));
    await conn.close();
    const owner = cluster.ownerOf(slot(queueKey(QUEUE, "")));
    out(`── wire ${wire}: 3 ${wire === 4 ? "plain primaries (the scripts)" : "module primaries (EMQ.*)"}`);
    let ok = true;
    for (const [i, p] of primaries.entries()) {
      const entries = mons[i]!.entries().filter((e) => !/^(cluster|ping|info)$/i.test(e.args[0] ?? ""));
      const lines = entries.filter((e) => e.client !== "lua").map((e) => e.args);
      const inside = entries.length - lines.length;
      const range = p.slots.map(([lo, hi]) => `${lo}-${hi}`).join(",");
      const owns = p === owner ? "  owns the queue's slot" : "";
      out(
        `  127.0.0.1:${p.port}  slots ${range.padEnd(12)}${owns}${inside ? ` (+${inside} commands inside the scripts)` : ""}`,
      );
      for (const args of lines) out(`    ${args.map(show).join(" ")}`);
      if (lines.length === 0) out("    —");
      ok &&= p === owner ? lines.length > 0 : lines.length === 0;
    }
    return ok;
  } finally {
    await cluster.stop();
  }
}

/** Runs both wires; resolves with whether each line reached the owner of the queue's slot only. */
export async function runClusterStand(out: (line: string) => void = console.log): Promise<boolean> {
  out(`stand --cluster: enqueue + claim on queue "${QUEUE}" (slot ${slot(queueKey(QUEUE, ""))})`);
  const ok = (await runOn(4, out)) && (await runOn(6, out));
  out(
    ok
      ? "stand --cluster: every line went to the owner of the queue's slot, none elsewhere"
      : "stand --cluster: a line went elsewhere",
  );
  return ok;
}

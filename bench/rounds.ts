/**
 * What the single-node measures that run variants of systems (bus, idle) share: their nodes — a
 * plain one (EchoMQ wire 4, the peers) and a module one (wire 6), no persistence, started only
 * when a variant needs it — and their rounds: each variant once per round, each run in a child
 * process of its own, the order rotated by one each round.
 */
import { modulePath } from "../tools/module-path.js";
import { live, runChild } from "./fork.js";
import type { MeasurePlan, MeasureResult } from "./measure.js";
import { Admin, type BenchServer, startServer } from "./server.js";
import type { Endpoint, SystemId } from "./systems/types.js";

/** A plan that runs nothing (every phase off): a measure turns on what it runs. */
function barePlan(system: SystemId, endpoint: Endpoint, round: number): MeasurePlan {
  return {
    system,
    endpoint,
    round,
    addSeqJobs: 0,
    addParallelJobs: 0,
    addParallelProducers: 0,
    bulkJobs: 0,
    bulkBatch: 50,
    addRepeats: 1,
    processJobs: 0,
    concurrencies: [],
    processCapMs: null,
    latency: null,
    ramp: null,
    burst: null,
    phaseTimeoutMs: 180_000,
  };
}

interface Rounds<V extends { system: SystemId }> {
  /** The measure's name, for failures (`bus: …`). */
  measure: string;
  rounds: number;
  variants: readonly V[];
  name(v: V): string;
  /** The variant's plan, from one that runs nothing. */
  plan(v: V, bare: MeasurePlan): MeasurePlan;
  /** A child's result (its errors are already failures); may add failures of its own. */
  took(v: V, round: number, res: MeasureResult): void;
}

/** Runs every round; resolves with what `EMQ.VERSION` reported, when the module node ran. */
export async function runRounds<V extends { system: SystemId }>(
  o: Rounds<V>,
  failures: string[],
): Promise<{ moduleVersion?: string }> {
  const servers: { plain?: BenchServer; module?: BenchServer } = {};
  let moduleVersion: string | undefined;
  try {
    if (o.variants.some((v) => v.system !== "echomq-w6")) {
      servers.plain = await startServer({ aof: false });
      live.servers.add(servers.plain);
    }
    if (o.variants.some((v) => v.system === "echomq-w6")) {
      servers.module = await startServer({ aof: false, module: modulePath() });
      live.servers.add(servers.module);
      const admin = await new Admin(servers.module.port).open();
      moduleVersion = String(((await admin.client.call("EMQ.VERSION")) as unknown[])[3]);
      await admin.close();
    }
    const runs = o.variants;
    for (let r = 1; r <= o.rounds && !live.stopping; r++) {
      const order = runs.map((_, i) => runs[(i + r - 1) % runs.length]!);
      for (const v of order) {
        if (live.stopping) break;
        const server = (v.system === "echomq-w6" ? servers.module : servers.plain)!;
        const bare = barePlan(v.system, { host: server.host, port: server.port }, r);
        try {
          const res = await runChild<MeasureResult>(o.plan(v, bare), 600_000);
          for (const e of res.errors) failures.push(`${o.measure}: ${o.name(v)} round ${r}: ${e}`);
          o.took(v, r, res);
        } catch (err) {
          if (live.stopping) break;
          failures.push(`${o.measure}: ${o.name(v)} round ${r}: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    for (const server of [servers.plain, servers.module]) {
      if (!server) continue;
      await server.stop();
      live.servers.delete(server);
    }
  }
  return moduleVersion ? { moduleVersion } : {};
}

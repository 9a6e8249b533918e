/**
 * The runner the on/off measures share (the bus measure, the tracing measure): on the bench's own
 * single nodes (no persistence), each round runs every variant once — EchoMQ on wire 4 or 6, or
 * BullMQ — in a child process of its own, in an order rotated by one each round. A run fills
 * `jobs` waiting jobs (batches of 50, 4 in flight) and processes them with one worker at
 * `concurrency`, completed jobs deleted. Each variant's samples are kept for its medians.
 */
import { modulePath } from "../tools/module-path.js";
import { live, runChild } from "./fork.js";
import type { MeasurePlan, MeasureResult } from "./measure.js";
import { Admin, type BenchServer, startServer } from "./server.js";
import { round } from "./stats.js";
import type { SystemId } from "./systems/types.js";

export interface VariantsConfig {
  rounds: number;
  /** Waiting jobs each run fills and processes. */
  jobs: number;
  concurrency: number;
}

export interface Variant {
  system: SystemId;
  /** The variant's name in logs and failures, unique among the runs. */
  name: string;
  /** What the variant sets in its child's plan (`bus: "off"`, `tracing: "on"`). */
  plan: Partial<MeasurePlan>;
}

/** One run of a variant: its rate, and the CPU it cost per job. */
export interface VariantSample {
  rate: number;
  /** Server CPU per job of the fill, µs. */
  add: number;
  /** Server CPU per job of the processing, µs. */
  process: number;
  /** The producer's (client) CPU per job of the fill, µs. */
  producer: number;
  /** The worker's (client) CPU per processed job, µs. */
  worker: number;
}

export interface VariantsResult {
  /** Each variant's samples, by name. */
  samples: Map<string, VariantSample[]>;
  /** What `EMQ.VERSION` reported on the module node, when wire 6 ran. */
  moduleVersion?: string;
}

/** Runs every variant `cfg.rounds` times; a failed run is recorded in `failures` (tagged `tag`). */
export async function runVariants(
  tag: string,
  cfg: VariantsConfig,
  runs: readonly Variant[],
  failures: string[],
): Promise<VariantsResult> {
  const servers: { plain?: BenchServer; module?: BenchServer } = {};
  const samples = new Map<string, VariantSample[]>();
  let moduleVersion: string | undefined;
  try {
    if (runs.some((v) => v.system !== "echomq-w6")) {
      servers.plain = await startServer({ aof: false });
      live.servers.add(servers.plain);
    }
    if (runs.some((v) => v.system === "echomq-w6")) {
      servers.module = await startServer({ aof: false, module: modulePath() });
      live.servers.add(servers.module);
      const admin = await new Admin(servers.module.port).open();
      moduleVersion = String(((await admin.client.call("EMQ.VERSION")) as unknown[])[3]);
      await admin.close();
    }
    for (let r = 1; r <= cfg.rounds && !live.stopping; r++) {
      const order = runs.map((_, i) => runs[(i + r - 1) % runs.length]!);
      for (const v of order) {
        if (live.stopping) break;
        const server = (v.system === "echomq-w6" ? servers.module : servers.plain)!;
        const plan: MeasurePlan = {
          system: v.system,
          endpoint: { host: server.host, port: server.port },
          round: r,
          addSeqJobs: 0,
          addParallelJobs: 0,
          addParallelProducers: 0,
          bulkJobs: 0,
          bulkBatch: 50,
          addRepeats: 1,
          processJobs: cfg.jobs,
          concurrencies: [cfg.concurrency],
          processCapMs: null,
          latency: null,
          ramp: null,
          burst: null,
          phaseTimeoutMs: 180_000,
          ...v.plan,
        };
        try {
          const res = await runChild<MeasureResult>(plan, 600_000);
          for (const e of res.errors) failures.push(`${tag}: ${v.name} round ${r}: ${e}`);
          const p = res.process[0];
          if (!p || p.completed !== cfg.jobs) {
            failures.push(`${tag}: ${v.name} round ${r}: processed ${p?.completed ?? 0}/${cfg.jobs}`);
            continue;
          }
          const list = samples.get(v.name) ?? [];
          list.push({
            rate: p.rate,
            add: p.addServerCpuUsPerJob,
            process: p.serverCpuUsPerJob,
            producer: p.addClientCpuUsPerJob,
            worker: p.workerCpuUsPerJob,
          });
          samples.set(v.name, list);
          process.stderr.write(
            `[${tag}] round ${r}/${cfg.rounds} ${v.name}: server ${p.addServerCpuUsPerJob} + ${p.serverCpuUsPerJob} µs/job, ` +
              `producer ${p.addClientCpuUsPerJob} µs/job, worker ${p.workerCpuUsPerJob} µs/job, ${round(p.rate / 1000)}k jobs/s\n`,
          );
        } catch (err) {
          if (live.stopping) break;
          failures.push(`${tag}: ${v.name} round ${r}: ${(err as Error).message}`);
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
  return { samples, ...(moduleVersion ? { moduleVersion } : {}) };
}

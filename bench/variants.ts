/**
 * The on/off measures' runner (the bus measure, the tracing measure), on `runRounds`: on the bench's own
 * single nodes (no persistence), each round runs every variant once — EchoMQ on wire 4 or 6, or
 * BullMQ — in a child process of its own, in an order rotated by one each round. A run fills
 * `jobs` waiting jobs (batches of 50, 4 in flight) and processes them with one worker at
 * `concurrency`, completed jobs deleted. Each variant's samples are kept for its medians.
 */
import type { MeasurePlan } from "./measure.js";
import { runRounds } from "./rounds.js";
import { round } from "./stats.js";
import type { SystemId } from "./systems/types.js";

export interface VariantsConfig {
  rounds: number;
  /** Waiting jobs each run fills and processes. */
  jobs: number;
  concurrency: number;
}

interface Variant {
  system: SystemId;
  /** The variant's name in logs and failures, unique among the runs. */
  name: string;
  /** What the variant sets in its child's plan (`bus: "off"`, `tracing: "on"`). */
  plan: Partial<MeasurePlan>;
}

/** One run of a variant: its rate, and the CPU it cost per job. */
interface VariantSample {
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

interface VariantsResult {
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
  const samples = new Map<string, VariantSample[]>();
  const { moduleVersion } = await runRounds(
    {
      measure: tag,
      rounds: cfg.rounds,
      variants: runs,
      name: (v) => v.name,
      plan: (v, bare) => ({ ...bare, processJobs: cfg.jobs, concurrencies: [cfg.concurrency], ...v.plan }),
      took: (v, r, res) => {
        const p = res.process[0];
        if (!p || p.completed !== cfg.jobs) {
          failures.push(`${tag}: ${v.name} round ${r}: processed ${p?.completed ?? 0}/${cfg.jobs}`);
          return;
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
      },
    },
    failures,
  );
  return { samples, ...(moduleVersion ? { moduleVersion } : {}) };
}

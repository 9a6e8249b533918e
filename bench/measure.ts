/**
 * The measurements of one system in one round, run inside that system's own child process (so
 * `process.cpuUsage()` charges only this system's client work). Every phase starts on a fresh
 * database (FLUSHALL SYNC, lazyfree drained), every loop is bounded in count and time, and every
 * queue, worker and connection is closed before the next phase.
 */
import {
  adapterFor,
  addBatches,
  addOnePerCall,
  CLOSE_BOUND_MS,
  jobData,
  type Rate,
  rate,
  withTimeout,
} from "./load.js";
import { type BullmqBenchPlan, runScenarios, type ScenarioResult } from "./bullmq-bench-run.js";
import { Admin, delta, type ServerDelta, sleep } from "./server.js";
import { percentile, round } from "./stats.js";
import type { Endpoint, Producer, SystemAdapter, SystemId } from "./systems/types.js";
import {
  type BurstPlan,
  type BurstResult,
  delayedBurst,
  type RampResult,
  resumeRamp,
  type TrafficContext,
  type TrafficPlan,
} from "./traffic.js";

export interface LatencyPlan {
  /** Jobs per second the producer adds, steadily. */
  rate: number;
  /** Whole run, warm-up included (ms). */
  durationMs: number;
  /** Samples of jobs added during the first `warmupMs` are not counted. */
  warmupMs: number;
  concurrency: number;
}

export interface MeasurePlan {
  system: SystemId;
  endpoint: Endpoint;
  round: number;
  /** Jobs for "add, one per call" with one producer; 0 skips. */
  addSeqJobs: number;
  /** Jobs for "add, one per call" with `addParallelProducers` concurrent producers; 0 skips. */
  addParallelJobs: number;
  addParallelProducers: number;
  /** Jobs for bulk add (batches of `bulkBatch`); 0 skips. */
  bulkJobs: number;
  bulkBatch: number;
  /** Runs of each add phase in this round (fresh database each); the median run is reported. */
  addRepeats: number;
  /** Waiting jobs each processing run starts from. */
  processJobs: number;
  concurrencies: number[];
  /**
   * A processing run stops after this long (ms) and its rate is taken over the jobs finished by
   * then; null: every waiting job runs (smoke). Keeps slow concurrency-1 runs inside the budget.
   */
  processCapMs: number | null;
  latency: LatencyPlan | null;
  /** The resume ramp (bench/traffic.ts); null skips. */
  ramp: TrafficPlan | null;
  /** The delayed burst (bench/traffic.ts); null skips. */
  burst: BurstPlan | null;
  /** Bound of any one phase (ms). */
  phaseTimeoutMs: number;
  /** EchoMQ only: `"off"` turns the queue's event bus off after every flush (the bus measure). */
  bus?: "off";
  /** EchoMQ only: the worker's batch size (`batch: { size }`, the batch measure); absent: one job per call. */
  batch?: number;
  /**
   * EchoMQ only: `"sdk"` traces the producer's queue and the worker (`tracing: true`) with an
   * OpenTelemetry SDK whose exporter drops the spans; `"api"` with the API alone, no SDK (its
   * no-op tracer: nothing records, as for a job sampled out). The tracing measure, bench/tracing.ts.
   */
  tracing?: "sdk" | "api";
  /** The idle phase (bench/idle.ts): a worker on an empty queue, its commands counted; absent skips. */
  idle?: { seconds: number; concurrency: number };
  /** EchoMQ only: the worker's `blockMs` (0: no blocking claim; absent: the default). */
  blockMs?: number;
  /** bullmq-bench's four scenarios (bench/bullmq-bench-run.ts); absent skips. */
  bullmqBench?: BullmqBenchPlan;
  /** BullMQ only: every option at its default, as bullmq-bench sets it. */
  bullmqBenchDefaults?: boolean;
}

interface IdleResult {
  seconds: number;
  /** Commands the clients sent over the idle window (MONITOR), and by name. */
  commands: number;
  byCommand: Record<string, number>;
  /** Commands scripts ran inside those (MONITOR's `lua` source): not sent, not counted above. */
  insideScripts: number;
}

interface ProcessResult extends Rate {
  concurrency: number;
  /** The time cap ended the run: `jobs` (= completed + failed) of the waiting jobs ran. */
  capped: boolean;
  completed: number;
  failed: number;
  /** Server CPU (user + sys) per processed job, µs. */
  serverCpuUsPerJob: number;
  /** Commands (commandstats calls, scripts' inner calls included) per processed job. */
  processCommandsPerJob: number;
  /** Commands per job of the fill (adds in batches). */
  addCommandsPerJob: number;
  /** Server CPU (user + sys) per job of the fill, µs. */
  addServerCpuUsPerJob: number;
  /** This process's CPU (user + sys) per job of the fill: the producer's side, µs. */
  addClientCpuUsPerJob: number;
  /** The worker process's CPU (user + sys) per processed job, µs. */
  workerCpuUsPerJob: number;
  /** used_memory delta of the fill, per waiting job. */
  bytesPerWaitingJob: number;
  /** Commands of the processing phase, by name. */
  processCommands: Record<string, number>;
  addCommands: Record<string, number>;
}

interface LatencyResult {
  samples: number;
  added: number;
  started: number;
  p50: number;
  p99: number;
  max: number;
  /** The same over every sample, warm-up included. */
  all: { p50: number; p99: number; max: number };
}

export interface MeasureResult {
  system: SystemId;
  round: number;
  settings: string;
  addSeq: Rate | null;
  addParallel: Rate | null;
  bulk: Rate | null;
  process: ProcessResult[];
  latency: LatencyResult | null;
  ramp: RampResult | null;
  burst: BurstResult | null;
  idle?: IdleResult | null;
  scenarios?: ScenarioResult[] | null;
  errors: string[];
  warnings: string[];
  /** Wall time of the whole child run, s. */
  wallSeconds: number;
}

/** How long a latency run's worker runs before the producer starts. */
const LATENCY_SETTLE_MS = 250;

export class Measurer {
  readonly errors: string[] = [];
  /** Not failures: slow closes and the like, reported with the results. */
  readonly warnings: string[] = [];
  private readonly adapter: SystemAdapter;
  private readonly admin: Admin;

  constructor(private readonly plan: MeasurePlan) {
    this.adapter = adapterFor(plan.system, plan.endpoint, {
      ...(plan.bus === "off" ? { busOff: true } : {}),
      ...(plan.batch !== undefined ? { batch: plan.batch } : {}),
      ...(plan.tracing ? { tracing: plan.tracing } : {}),
      ...(plan.blockMs !== undefined ? { blockMs: plan.blockMs } : {}),
      ...(plan.bullmqBenchDefaults ? { bullmqBenchDefaults: true } : {}),
    });
    this.admin = new Admin(plan.endpoint.port);
  }

  async run(): Promise<MeasureResult> {
    const t0 = performance.now();
    const p = this.plan;
    await this.admin.open();
    const result: MeasureResult = {
      system: p.system,
      round: p.round,
      settings: this.adapter.settings,
      addSeq: null,
      addParallel: null,
      bulk: null,
      process: [],
      latency: null,
      ramp: null,
      burst: null,
      errors: this.errors,
      warnings: this.warnings,
      wallSeconds: 0,
    };
    try {
      if (p.addSeqJobs > 0)
        result.addSeq = await this.phase("add x1", (pr) => addOnePerCall(pr, p.addSeqJobs, 1));
      if (p.addParallelJobs > 0)
        result.addParallel = await this.phase(`add x${p.addParallelProducers}`, (pr) =>
          addOnePerCall(pr, p.addParallelJobs, p.addParallelProducers),
        );
      if (p.bulkJobs > 0)
        result.bulk = await this.phase("bulk add", (pr) => addBatches(pr, p.bulkJobs, p.bulkBatch, 1));
      for (const c of p.concurrencies) {
        const r = await this.guard(`process c=${c}`, () => this.processRun(c));
        if (r) result.process.push(r);
      }
      const bench = p.bullmqBench;
      if (bench)
        result.scenarios = await this.guard("bullmq-bench", () => runScenarios(this.traffic(), bench));
      if (p.idle) {
        const plan = p.idle;
        result.idle = await this.guard("idle", () => this.idleRun(plan));
      }
      if (p.latency) {
        const plan = p.latency;
        result.latency = await this.guard("latency", () => this.latencyRun(plan));
      }
      const ramp = p.ramp;
      if (ramp) result.ramp = await this.guard("resume ramp", () => resumeRamp(this.traffic(), ramp));
      const burst = p.burst;
      if (burst) result.burst = await this.guard("delayed burst", () => delayedBurst(this.traffic(), burst));
    } finally {
      await this.admin.flush().catch(() => {});
      await this.admin.close();
    }
    result.wallSeconds = round((performance.now() - t0) / 1000, 2);
    return result;
  }

  /** What the traffic phases (bench/traffic.ts) use of this Measurer. */
  private traffic(): TrafficContext {
    return {
      adapter: this.adapter,
      // The delayed burst adds its lead; a backstop bounds the whole phase in guard().
      phaseTimeoutMs: this.plan.phaseTimeoutMs,
      fresh: () => this.fresh(),
      close: (what, closable) => this.close(what, closable),
    };
  }

  private async guard<T>(what: string, fn: () => Promise<T>): Promise<T | null> {
    try {
      // A backstop: the phase's own waits are bounded by phaseTimeoutMs, each close by CLOSE_BOUND_MS.
      return await withTimeout(fn(), this.plan.phaseTimeoutMs + 2 * CLOSE_BOUND_MS + 10_000, what);
    } catch (err) {
      this.errors.push(`${what}: ${(err as Error).stack ?? String(err)}`);
      return null;
    }
  }

  /** Closes a producer or consumer; one that takes longer than CLOSE_BOUND_MS is recorded and left. */
  private async close(what: string, closable: { close(): Promise<void> }): Promise<void> {
    const t0 = performance.now();
    try {
      await withTimeout(closable.close(), CLOSE_BOUND_MS, `${what} close`);
    } catch (err) {
      this.errors.push(`${what}: close failed: ${(err as Error).message}`);
    }
    const ms = performance.now() - t0;
    if (ms > 1000) this.warnings.push(`${what}: close took ${Math.round(ms)} ms`);
  }

  private async fresh(): Promise<void> {
    await this.admin.flush();
    await this.adapter.prepare();
  }

  /**
   * An add phase, `addRepeats` times: each a fresh database, a producer, one timed run, the
   * producer closed. The median run is the result; every run's rate is kept in `runs`.
   */
  private phase(what: string, fn: (producer: Producer) => Promise<Rate>): Promise<Rate | null> {
    return this.guard(what, async () => {
      const results: Rate[] = [];
      for (let i = 0; i < Math.max(1, this.plan.addRepeats); i++) {
        await this.fresh();
        const producer = await this.adapter.producer();
        try {
          results.push(await fn(producer));
        } finally {
          await this.close(`${what}: producer`, producer);
        }
      }
      const sorted = [...results].sort((a, b) => a.rate - b.rate);
      const median = sorted[Math.floor((sorted.length - 1) / 2)] as Rate;
      return results.length === 1 ? median : { ...median, runs: results.map((r) => r.rate) };
    });
  }

  /** Fills `processJobs` waiting jobs (memory + add commands), then one worker processes them all. */
  private async processRun(concurrency: number): Promise<ProcessResult> {
    const n = this.plan.processJobs;
    await this.fresh();
    const producer = await this.adapter.producer();
    const beforeFill = await this.admin.sample();
    const fillCpu0 = process.cpuUsage();
    let fillCpu: NodeJS.CpuUsage;
    try {
      await addBatches(producer, n, this.plan.bulkBatch, 4);
      fillCpu = process.cpuUsage(fillCpu0);
    } finally {
      await this.close("fill: producer", producer);
    }
    await sleep(50);
    const fill: ServerDelta = delta(beforeFill, await this.admin.sample());
    const waiting = await this.adapter.waiting();
    if (waiting !== n) throw new Error(`after the fill ${waiting} jobs wait, expected ${n}`);

    let completed = 0;
    let failed = 0;
    let firstError: unknown;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    const before = await this.admin.sample();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const consumer = await this.adapter.consumer({
      concurrency,
      onCompleted: () => {
        completed += 1;
        if (completed + failed === n) resolveDone();
      },
      onFailed: (err) => {
        failed += 1;
        firstError ??= err;
        if (completed + failed === n) resolveDone();
      },
    });
    let seconds = 0;
    let cpu: NodeJS.CpuUsage;
    let server: ServerDelta;
    // Jobs the window covers: all n, or those finished when the time cap ended the window.
    let counted = n;
    let capTimer: NodeJS.Timeout | undefined;
    const cap = this.plan.processCapMs;
    const capped = new Promise<boolean>((resolve) => {
      if (cap !== null) capTimer = setTimeout(() => resolve(true), cap);
    });
    try {
      const hitCap = await withTimeout(
        Promise.race([done.then(() => false), capped]),
        this.plan.phaseTimeoutMs,
        `process c=${concurrency}`,
      ).catch((err) => {
        throw new Error(`${(err as Error).message}: ${completed}/${n} completed, ${failed} failed`);
      });
      seconds = (performance.now() - t0) / 1000;
      cpu = process.cpuUsage(cpu0);
      if (hitCap) counted = completed + failed;
      server = delta(before, await this.admin.sample());
    } finally {
      clearTimeout(capTimer);
      await this.close(`process c=${concurrency}: worker`, consumer);
    }
    if (failed > 0)
      this.errors.push(`process c=${concurrency}: ${failed} failed, first: ${String(firstError)}`);
    if (counted === 0) throw new Error(`process c=${concurrency}: no job finished in ${cap} ms`);
    return {
      concurrency,
      ...rate(counted, seconds),
      capped: counted < n,
      completed,
      failed,
      serverCpuUsPerJob: round((server.cpuSeconds * 1e6) / counted, 1),
      processCommandsPerJob: round(server.commands / counted, 2),
      addCommandsPerJob: round(fill.commands / n, 2),
      addServerCpuUsPerJob: round((fill.cpuSeconds * 1e6) / n, 1),
      addClientCpuUsPerJob: round((fillCpu.user + fillCpu.system) / n, 1),
      workerCpuUsPerJob: round((cpu.user + cpu.system) / counted, 1),
      bytesPerWaitingJob: round(fill.memory / n, 0),
      processCommands: server.perCommand,
      addCommands: fill.perCommand,
    };
  }

  /**
   * A worker on an empty queue, settled 1 s; then, over `seconds`, every command the clients send
   * (`MONITOR`, by name) and those scripts run inside them (MONITOR's `lua` source), apart.
   */
  private async idleRun(plan: { seconds: number; concurrency: number }): Promise<IdleResult> {
    await this.fresh();
    const consumer = await this.adapter.consumer({
      concurrency: plan.concurrency,
      onCompleted: () => {},
      onFailed: (err) => this.errors.push(`idle: ${String(err)}`),
    });
    const byCommand: Record<string, number> = {};
    let commands = 0;
    let insideScripts = 0;
    try {
      await sleep(1000);
      const monitor = await this.admin.client.monitor();
      monitor.on("monitor", (_time: string, args: string[], source: string) => {
        if (source === "lua") {
          insideScripts += 1;
          return;
        }
        const name = String(args[0] ?? "").toLowerCase();
        byCommand[name] = (byCommand[name] ?? 0) + 1;
        commands += 1;
      });
      await sleep(plan.seconds * 1000);
      monitor.disconnect();
      return { seconds: plan.seconds, commands, byCommand, insideScripts };
    } finally {
      await this.close("idle: worker", consumer);
    }
  }

  /**
   * A producer adds `rate` jobs/s on a steady schedule (each tick adds what is due since the
   * start; at most 1000 adds in flight) while one worker of `concurrency` records, at the start
   * of each handler, now − the job's add time.
   */
  private async latencyRun(plan: LatencyPlan): Promise<LatencyResult> {
    await this.fresh();
    const samples: { t: number; latency: number }[] = [];
    const total = Math.round((plan.rate * plan.durationMs) / 1000);
    let resolveAll!: () => void;
    const allStarted = new Promise<void>((resolve) => {
      resolveAll = resolve;
    });
    let failed = 0;
    const consumer = await this.adapter.consumer({
      concurrency: plan.concurrency,
      handler: (data) => {
        samples.push({ t: data.t, latency: performance.now() - data.t });
        if (samples.length === total) resolveAll();
      },
      onCompleted: () => {},
      onFailed: () => {
        failed += 1;
      },
    });
    const producer = await this.adapter.producer();
    // The worker runs a moment before the first job, as in an application (not the warm-up).
    await sleep(LATENCY_SETTLE_MS);
    let added = 0;
    let inFlight = 0;
    let addError: unknown;
    const start = performance.now();
    try {
      await new Promise<void>((resolve) => {
        const tick = setInterval(() => {
          const elapsed = performance.now() - start;
          const due = Math.min(total, Math.floor((elapsed * plan.rate) / 1000));
          while (added < due && inFlight < 1000) {
            added += 1;
            inFlight += 1;
            producer
              .add(jobData())
              .catch((err) => {
                addError ??= err;
              })
              .finally(() => {
                inFlight -= 1;
              });
          }
          if (added >= total || elapsed > plan.durationMs * 2) {
            clearInterval(tick);
            resolve();
          }
        }, 1);
      });
      await withTimeout(allStarted, 10_000, "latency: waiting for the last jobs").catch((err) => {
        throw new Error(`${(err as Error).message}: ${samples.length}/${total} started`);
      });
    } finally {
      await this.close("latency: producer", producer);
      await this.close("latency: worker", consumer);
    }
    if (addError) throw addError;
    if (failed > 0) this.errors.push(`latency: ${failed} jobs failed`);
    const warm = start + plan.warmupMs;
    const measured = samples
      .filter((s) => s.t >= warm)
      .map((s) => s.latency)
      .sort((a, b) => a - b);
    const all = samples.map((s) => s.latency).sort((a, b) => a - b);
    return {
      samples: measured.length,
      added,
      started: samples.length,
      p50: round(percentile(measured, 50), 2),
      p99: round(percentile(measured, 99), 2),
      max: round(measured.at(-1) ?? Number.NaN, 2),
      all: {
        p50: round(percentile(all, 50), 2),
        p99: round(percentile(all, 99), 2),
        max: round(all.at(-1) ?? Number.NaN, 2),
      },
    };
  }
}

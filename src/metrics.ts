/**
 * Prometheus metrics: what the server holds per queue (read at each scrape) and the outcomes of
 * jobs, in the Prometheus text format (prom-client).
 *
 *   const metrics = new Metrics(conn, { queues: ["emails"] });
 *   metrics.observe(worker);                         // counters and histograms of that worker
 *   await serveMetrics(metrics, { port: 9464 });     // 127.0.0.1:9464/metrics (or mount handler())
 *
 * What each source can know:
 * * the gauges (`echomq_jobs`, `echomq_queue_latency_seconds`, `echomq_queue_paused`,
 *   `echomq_workers`) are read from the server at each scrape: any process sees them;
 * * the outcome counters and histograms count what a worker of **this process** did, from the
 *   moment `observe(worker)` attached it (its events: handler times need the handler's process);
 * * or, with `counted`, the completions and failed attempts a long-lived reader of the bus
 *   counted (the dashboard's sampler: every worker of every process, since the reader started).
 * Without a source a family is not exported at all (a one-shot `echomq metrics` has no past to
 * count), never as a series that stays empty.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { idTime } from "./branded-id.js";
import type { Connection } from "./connector/connection.js";
import { InvalidArgumentError } from "./errors.js";
import { assertValidQueue } from "./keyspace.js";
import { Queue } from "./queue.js";
import type { Worker } from "./worker.js";
import { headReadyAgeMs } from "./observe/ready.js";
import { listWorkers, workersPerQueue } from "./observe/workers.js";

export interface MetricsOptions {
  /** The queues whose state is read at each scrape. */
  queues: readonly string[];
  /** Register into this registry (default: a registry of its own). */
  registry?: Registry;
  /** The package version reported by `echomq_build_info`. Default: this package's. */
  version?: string;
  /**
   * Completions and failed attempts per queue, counted on the bus by a long-lived reader (the
   * dashboard's sampler), exported as `echomq_jobs_completed_total` and
   * `echomq_attempts_failed_total`. With it, `observe(worker)` is refused (it would count twice).
   */
  counted?: ReadonlyMap<string, { completed: number; failed: number }>;
}

/** The families `observe(worker)` fills, made on its first call. */
interface Outcomes {
  completed: Counter<"queue">;
  failed: Counter<"queue">;
  retried: Counter<"queue">;
  dead: Counter<"queue">;
  stalled: Counter<"queue">;
  duration: Histogram<"queue" | "outcome">;
  wait: Histogram<"queue">;
}

const STATES = ["pending", "scheduled", "active", "completed", "dead", "waiting"] as const;
/** Seconds: 1 ms to 10 min, for handler time and waiting time alike. */
const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

export const PACKAGE_VERSION = "0.1.0";

export class Metrics {
  readonly registry: Registry;
  private readonly registers: Registry[];
  private readonly counted: boolean;
  private outcomes?: Outcomes;

  constructor(
    private readonly conn: Connection,
    options: MetricsOptions,
  ) {
    if (!Array.isArray(options?.queues)) {
      throw new InvalidArgumentError("queues", "must be an array of queue names to report");
    }
    for (const queue of options.queues) assertValidQueue(queue);
    const queues = [...options.queues];
    this.registry = options.registry ?? new Registry();
    const registers = [this.registry];
    this.registers = registers;
    this.counted = options.counted !== undefined;
    if (options.counted !== undefined) {
      const completed = this.counter(
        "echomq_jobs_completed_total",
        "Jobs completed, counted on the bus (every worker of every process) since the reader started.",
      );
      const failed = this.counter(
        "echomq_attempts_failed_total",
        "Attempts that failed (a retry or dead follows), counted on the bus since the reader started.",
      );
      for (const [queue, c] of options.counted) {
        completed.inc({ queue }, c.completed);
        failed.inc({ queue }, c.failed);
      }
    }
    const read = () => this.read(queues);
    let reading: ReturnType<typeof read> | undefined;
    // One server read per scrape, shared by the gauges it fills.
    const snapshot = () => {
      reading ??= read().finally(() => setImmediate(() => (reading = undefined)));
      return reading;
    };
    new Gauge({
      name: "echomq_jobs",
      help: "Jobs in each state, per queue (read from the server at each scrape).",
      labelNames: ["queue", "state"],
      registers,
      async collect() {
        for (const [queue, s] of await snapshot()) {
          for (const state of STATES) this.set({ queue, state }, s.counts[state]);
        }
      },
    });
    new Gauge({
      name: "echomq_queue_latency_seconds",
      help: "How long the job at the head of pending (the next to run) has been ready: since it last entered pending (the bus's entry), else since its creation; 0 when none waits.",
      labelNames: ["queue"],
      registers,
      async collect() {
        for (const [queue, s] of await snapshot()) this.set({ queue }, s.latency);
      },
    });
    new Gauge({
      name: "echomq_queue_paused",
      help: "1 while the queue is paused.",
      labelNames: ["queue"],
      registers,
      async collect() {
        for (const [queue, s] of await snapshot()) this.set({ queue }, s.counts.paused ? 1 : 0);
      },
    });
    new Gauge({
      name: "echomq_workers",
      help: "Workers connected to the queue (their wake subscriptions, from CLIENT LIST on every primary).",
      labelNames: ["queue"],
      registers,
      async collect() {
        for (const [queue, s] of await snapshot()) this.set({ queue }, s.workers);
      },
    });
    const build = new Gauge({
      name: "echomq_build_info",
      help: "The wire this process speaks and the package version.",
      labelNames: ["wire", "version"],
      registers,
    });
    build.set({ wire: String(conn.wire), version: options.version ?? PACKAGE_VERSION }, 1);
  }

  private counter(name: string, help: string): Counter<"queue"> {
    return new Counter({ name, help, labelNames: ["queue"], registers: this.registers });
  }

  private outcomesOf(): Outcomes {
    const histogram = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Histogram<L>({ name, help, labelNames, buckets: BUCKETS, registers: this.registers });
    this.outcomes ??= {
      completed: this.counter(
        "echomq_jobs_completed_total",
        "Jobs this process's observed workers completed.",
      ),
      failed: this.counter(
        "echomq_attempts_failed_total",
        "Attempts this process's observed workers failed (a retry or dead follows): a job that fails twice counts 2.",
      ),
      retried: this.counter("echomq_jobs_retried_total", "Failed attempts that will run again."),
      dead: this.counter("echomq_jobs_dead_total", "Jobs that exhausted their attempts."),
      stalled: this.counter("echomq_jobs_stalled_total", "Expired leases this process's timers took back."),
      duration: histogram("echomq_job_duration_seconds", "Handler time of each settled attempt.", [
        "queue",
        "outcome",
      ]),
      wait: histogram(
        "echomq_job_wait_seconds",
        "From the job's creation (its id's time; a delayed job counts its delay) to its handler's start.",
        ["queue"],
      ),
    };
    return this.outcomes;
  }

  /**
   * Counts a worker's outcomes, handler times and waits from now on (its events, so only a
   * worker of this process); returns a detach function. The counter and histogram families are
   * exported from the first call on. Refused when this `Metrics` counts from the bus (`counted`).
   */
  observe(worker: Worker): () => void {
    if (this.counted) {
      throw new InvalidArgumentError(
        "worker",
        "cannot be observed by a Metrics made with `counted` (it counts every worker from the bus already): make another Metrics for it",
      );
    }
    const o = this.outcomesOf();
    const queue = worker.queue;
    const since = (at: number) => Math.max(0, (Date.now() - at) / 1000);
    const listeners = {
      active: (job: { id: string; startedAt: number }) =>
        o.wait.observe({ queue }, Math.max(0, (job.startedAt - idTime(job.id)) / 1000)),
      completed: (job: { startedAt: number }) => {
        o.completed.inc({ queue });
        o.duration.observe({ queue, outcome: "completed" }, since(job.startedAt));
      },
      failed: (job: { startedAt: number }) => {
        o.failed.inc({ queue });
        o.duration.observe({ queue, outcome: "failed" }, since(job.startedAt));
      },
      retrying: () => o.retried.inc({ queue }),
      dead: () => o.dead.inc({ queue }),
      stalled: (requeued: string[], dead: string[]) =>
        o.stalled.inc({ queue }, requeued.length + dead.length),
    };
    for (const [event, fn] of Object.entries(listeners)) worker.on(event as never, fn as never);
    return () => {
      for (const [event, fn] of Object.entries(listeners)) worker.off(event as never, fn as never);
    };
  }

  /** The metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * An HTTP handler serving the metrics (mount it at `/metrics`). It checks nothing: behind your
   * own server's checks, or use `serveMetrics`, which listens on loopback and refuses foreign hosts.
   */
  handler(): (req: IncomingMessage, res: ServerResponse) => void {
    return (_req, res) => {
      this.text().then(
        (body) => {
          res.writeHead(200, { "content-type": this.registry.contentType });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`# echomq metrics failed: ${err instanceof Error ? err.message : String(err)}\n`);
        },
      );
    };
  }

  private async read(queues: readonly string[]) {
    const [list, ...rest] = await Promise.all([
      listWorkers(this.conn).catch(() => null),
      ...queues.map(async (name) => {
        const q = new Queue(name, this.conn);
        const [counts, age] = await Promise.all([q.counts(), headReadyAgeMs(this.conn, name)]);
        const latency = age / 1000;
        return [name, { counts, latency }] as const;
      }),
    ]);
    const perQueue = workersPerQueue(list ?? []);
    return rest.map(([name, s]) => [name, { ...s, workers: perQueue.get(name)?.workers ?? 0 }] as const);
  }
}

/**
 * Prometheus metrics: what the server holds per queue (read at each scrape) and what this
 * process's workers did (counted as it happens), in the Prometheus text format (prom-client).
 *
 *   const metrics = new Metrics(conn, { queues: ["emails"] });
 *   metrics.observe(worker);                         // counters and histograms of that worker
 *   await serveMetrics(metrics, { port: 9464 });     // 127.0.0.1:9464/metrics (or mount handler())
 */
import { wakeClientName } from "../worker/client-name.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { idTime, isValidBrandedId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertValidQueue, queueKey } from "../keyspace.js";
import { Queue } from "../queue.js";
import type { Worker } from "../worker.js";

export interface MetricsOptions {
  /** The queues whose state is read at each scrape. */
  queues: readonly string[];
  /** Register into this registry (default: a registry of its own). */
  registry?: Registry;
  /** The package version reported by `echomq_build_info`. Default: this package's. */
  version?: string;
}

const STATES = ["pending", "scheduled", "active", "completed", "dead", "waiting"] as const;
/** Seconds: 1 ms to 10 min, for handler time and waiting time alike. */
const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

export const PACKAGE_VERSION = "0.1.0";

/**
 * The age at `now` (ms) of the job at the head of `pending`, from `ZRANGE <pending> 0 0`: its id
 * carries its admission time. 0 when nothing is pending, or for an id that is not a branded id
 * (an orphan: the claim drops it).
 */
export function headAgeMs(head: readonly Buffer[], now: number): number {
  const id = head[0]?.toString("latin1");
  return id !== undefined && isValidBrandedId(id) ? Math.max(0, now - idTime(id)) : 0;
}

export class Metrics {
  readonly registry: Registry;
  private readonly completed: Counter<"queue">;
  private readonly failed: Counter<"queue">;
  private readonly retried: Counter<"queue">;
  private readonly dead: Counter<"queue">;
  private readonly stalled: Counter<"queue">;
  private readonly duration: Histogram<"queue" | "outcome">;
  private readonly wait: Histogram<"queue">;

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
    const counter = (name: string, help: string) =>
      new Counter({ name, help, labelNames: ["queue"], registers });
    this.completed = counter("echomq_jobs_completed_total", "Jobs this process's workers completed.");
    this.failed = counter("echomq_jobs_failed_total", "Attempts that failed (a retry or dead follows).");
    this.retried = counter("echomq_jobs_retried_total", "Failed attempts that will run again.");
    this.dead = counter("echomq_jobs_dead_total", "Jobs that exhausted their attempts.");
    this.stalled = counter("echomq_jobs_stalled_total", "Expired leases the timers took back.");
    this.duration = new Histogram({
      name: "echomq_job_duration_seconds",
      help: "Handler time of each settled attempt.",
      labelNames: ["queue", "outcome"],
      buckets: BUCKETS,
      registers,
    });
    this.wait = new Histogram({
      name: "echomq_job_wait_seconds",
      help: "From the job's creation (its id's time; a delayed job counts its delay) to its handler's start.",
      labelNames: ["queue"],
      buckets: BUCKETS,
      registers,
    });
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
      help: "Age of the job at the head of pending (the next to run): 0 when none waits.",
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
      help: "Workers connected to the queue (their wake subscriptions, from CLIENT LIST).",
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

  /** Counts a worker's outcomes, handler times and waits from now on; returns a detach function. */
  observe(worker: Worker): () => void {
    const queue = worker.queue;
    const since = (at: number) => Math.max(0, (Date.now() - at) / 1000);
    const listeners = {
      active: (job: { id: string; startedAt: number }) =>
        this.wait.observe({ queue }, Math.max(0, (job.startedAt - idTime(job.id)) / 1000)),
      completed: (job: { startedAt: number }) => {
        this.completed.inc({ queue });
        this.duration.observe({ queue, outcome: "completed" }, since(job.startedAt));
      },
      failed: (job: { startedAt: number }) => {
        this.failed.inc({ queue });
        this.duration.observe({ queue, outcome: "failed" }, since(job.startedAt));
      },
      retrying: () => this.retried.inc({ queue }),
      dead: () => this.dead.inc({ queue }),
      stalled: (requeued: string[], dead: string[]) =>
        this.stalled.inc({ queue }, requeued.length + dead.length),
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
      this.conn.send("CLIENT", ["LIST"]).catch(() => null),
      ...queues.map(async (name) => {
        const q = new Queue(name, this.conn);
        const [counts, head, now] = await Promise.all([
          q.counts(),
          this.conn.send("ZRANGE", [queueKey(name, "pending"), 0, 0]) as Promise<Buffer[]>,
          this.conn.send("TIME", []) as Promise<Buffer[]>,
        ]);
        const serverNow = Number(String(now[0])) * 1000 + Math.floor(Number(String(now[1])) / 1000);
        const latency = headAgeMs(head, serverNow) / 1000;
        return [name, { counts, latency }] as const;
      }),
    ]);
    const clients = list === null ? "" : String(list);
    return rest.map(([name, s]) => {
      const workers = clients
        .split("\n")
        .filter((line) => line.includes(` name=${wakeClientName(name)} `)).length;
      return [name, { ...s, workers }] as const;
    });
  }
}

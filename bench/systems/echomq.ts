/**
 * EchoMQ as a user writes it: `connect({ wire })`, `new Queue(name, conn)`, `queue.add`,
 * `queue.addBulk`, `new Worker(queue, handler, { concurrency })`, its `completed` event,
 * `worker.close()` then `conn.close()`. The worker deletes a job when it completes
 * (`keepCompleted: 0`), as BullMQ (`removeOnComplete: true`) and bee-queue (`removeOnSuccess`)
 * are set to here; every other setting is the Worker's default (30 s leases renewed while a
 * handler runs, 3 attempts).
 * It imports the built package (`echomq`, i.e. `dist/`), as a user's code does; `npm run bench`
 * builds it first.
 * Wire 4 runs on a plain node (the connector brands it `echomq:4.0.0`); wire 6 on a node with the
 * module, branded by `installModuleBrand` after every flush.
 * Tracing (the tracing measure): `new Queue(name, conn, { tracing: true })` and the worker's
 * `tracing: true`, with an SDK that records every span and drops it at export (noop-tracing.ts),
 * or with the API alone (no SDK registered: its no-op tracer).
 * Delayed jobs: `add(payload, { delay })` (ms from the server's now; the worker's own timer
 * promotes due jobs, every `promoteEveryMs`, default 1 s). The hold: `queue.pause()`, released by
 * `queue.resume()`.
 */
import { connect, type Job, Queue, Worker } from "echomq";
import { installModuleBrand } from "echomq/admin";
import {
  type ConsumerOptions,
  delayUntil,
  type Endpoint,
  type Hold,
  type JobData,
  QUEUE_NAME,
  type SystemAdapter,
} from "./types.js";
import { flushTracing, useNoopTracing } from "./noop-tracing.js";

/**
 * How the bench varies EchoMQ: the event bus off (the bus measure), tracing on with an SDK or with
 * the API alone (the tracing measure).
 */
export interface EchoOptions {
  busOff?: boolean;
  tracing?: "sdk" | "api";
  /** The worker's `blockMs` (the idle measure). */
  blockMs?: number;
  /** The worker's batch size (the batch measure): the handler takes that many jobs per call. */
  batch?: number;
}

/** A batch handler around the measure's body: each job's data to it, one result per job. */
function batchHandler(body: ((data: JobData) => unknown) | undefined) {
  if (!body) return () => undefined;
  return (jobs: Job[]) => Promise.all(jobs.map((job) => body(job.json<JobData>())));
}

export function echomqAdapter(endpoint: Endpoint, wire: 4 | 6, o: EchoOptions = {}): SystemAdapter {
  const target = { host: endpoint.host, port: endpoint.port, wire } as const;
  if (o.tracing === "sdk") useNoopTracing();
  const traced = o.tracing ? { tracing: true } : {};
  return {
    id: wire === 4 ? "echomq-w4" : "echomq-w6",
    settings:
      `connect({ wire: ${wire} }); Worker { concurrency, keepCompleted: 0 } (defaults otherwise)` +
      (o.busOff ? "; queue.setEvents({ maxLen: 0 }) (the event bus off)" : "") +
      (o.tracing === "sdk"
        ? "; tracing: true on the queue and the worker (an SDK that drops the spans)"
        : "") +
      (o.tracing === "api" ? "; tracing: true on the queue and the worker (the API alone, no SDK)" : "") +
      (o.blockMs !== undefined ? `; Worker { blockMs: ${o.blockMs} }` : "") +
      (o.batch !== undefined ? `; Worker { batch: { size: ${o.batch} } } (a no-op batch handler)` : ""),
    async prepare() {
      if (wire === 6) await installModuleBrand(target);
      if (o.busOff) {
        const conn = await connect(target);
        try {
          await new Queue(QUEUE_NAME, conn).setEvents({ maxLen: 0 });
        } finally {
          await conn.close();
        }
      }
    },
    async producer() {
      const conn = await connect(target);
      const queue = new Queue(QUEUE_NAME, conn, traced);
      return {
        add: async (data) => {
          await queue.add(JSON.stringify(data));
        },
        addBulk: async (batch, dueAt) => {
          if (dueAt === undefined) {
            await queue.addBulk(batch.map((data) => ({ payload: JSON.stringify(data) })));
            return;
          }
          const delay = delayUntil(dueAt);
          await queue.addBulk(batch.map((data) => ({ payload: JSON.stringify(data), opts: { delay } })));
        },
        close: async () => {
          if (o.tracing) await flushTracing();
          await conn.close();
        },
      };
    },
    async consumer(opts: ConsumerOptions) {
      const conn = await connect(target);
      const queue = new Queue(QUEUE_NAME, conn);
      const body = opts.handler;
      const settings = {
        concurrency: opts.concurrency,
        keepCompleted: 0,
        ...traced,
        ...(o.blockMs !== undefined ? { blockMs: o.blockMs } : {}),
      };
      const worker =
        o.batch !== undefined
          ? new Worker(queue, batchHandler(body), { ...settings, batch: { size: o.batch } })
          : new Worker(queue, body ? (job) => body(job.json<JobData>()) : () => {}, settings);
      worker.on("completed", () => opts.onCompleted());
      worker.on("failed", (_job, err) => opts.onFailed(err));
      worker.on("error", (err) => opts.onFailed(err));
      await worker.ready;
      return {
        close: async () => {
          await worker.close();
          if (o.tracing) await flushTracing();
          await conn.close();
        },
      };
    },
    async hold(): Promise<Hold> {
      const conn = await connect(target);
      const queue = new Queue(QUEUE_NAME, conn);
      await queue.pause();
      return {
        how: "queue.pause() before the fill; released by queue.resume()",
        queuePause: true,
        release: async () => {
          await queue.resume();
        },
        close: () => conn.close(),
      };
    },
    async waiting() {
      const conn = await connect(target);
      try {
        return (await new Queue(QUEUE_NAME, conn).counts()).pending;
      } finally {
        await conn.close();
      }
    },
  };
}

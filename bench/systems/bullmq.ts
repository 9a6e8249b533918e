/**
 * BullMQ 6 as its docs show: `Queue.add` / `Queue.addBulk` with auto-removal of finished jobs
 * (`defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 }`, as "Going to
 * production" recommends, so completed jobs do not pile up), a `Worker` with a concurrency and a
 * no-op processor. Delayed jobs: the `delay` option (the Worker itself moves due jobs to wait).
 * The hold: `queue.pause()`, released by `queue.resume()`.
 *
 * Options left at their defaults, and why none is faster: `enableAutoPipelining` off (ioredis'
 * default and bullmq-bench's; measured slower on per-job loops over loopback), the stalled check
 * every 30 s and lock renewal every 15 s (neither fires inside a bench phase), `drainDelay` (only
 * an empty queue waits on it), `autorun: true` (the worker starts when made).
 *
 * `{ benchDefaults: true }` (the bullmq-bench measure only): BullMQ exactly as its own
 * bullmq-bench sets it, every Queue and Worker option at its default, so completed jobs are kept
 * with their return value.
 *
 * BullMQ 6 loads the optional `ioredis` driver lazily; this repository has `iovalkey` (the
 * ioredis fork with the same API and code) instead, so the bench registers it as the client
 * factory: BullMQ then builds every connection from the same connection options a user passes.
 */
import { Redis as IOValkey } from "iovalkey";
import { Queue, RedisConnection, Worker, createIORedisClient } from "bullmq";
import {
  type ConsumerOptions,
  delayUntil,
  type Endpoint,
  type Hold,
  type JobData,
  type Payload,
  QUEUE_NAME,
  type SystemAdapter,
} from "./types.js";

RedisConnection.clientFactory = (opts) => createIORedisClient(new IOValkey(opts as never)) as never;

export function bullmqAdapter(endpoint: Endpoint, o: { benchDefaults?: boolean } = {}): SystemAdapter {
  const connection = { host: endpoint.host, port: endpoint.port };
  const jobOptions = o.benchDefaults
    ? {}
    : { defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } };
  return {
    id: "bullmq",
    settings: o.benchDefaults
      ? "Queue and Worker at their defaults, as bullmq-bench sets them (completed and failed jobs kept, with their return value); Worker { concurrency }"
      : "Queue { defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } }; Worker { concurrency } " +
        "(defaults otherwise: ioredis enableAutoPipelining off, stalledInterval 30 s, lock renewal 15 s, autorun)",
    async prepare() {},
    async producer() {
      const queue = new Queue<Payload>(QUEUE_NAME, { connection, ...jobOptions });
      await queue.waitUntilReady();
      return {
        add: async (data) => {
          await queue.add("job", data);
        },
        addBulk: async (batch, dueAt) => {
          if (dueAt === undefined) {
            await queue.addBulk(batch.map((data) => ({ name: "job", data })));
            return;
          }
          const delay = delayUntil(dueAt);
          await queue.addBulk(batch.map((data) => ({ name: "job", data, opts: { delay } })));
        },
        close: () => queue.close(),
      };
    },
    async consumer(opts: ConsumerOptions) {
      const body = opts.handler;
      const worker = new Worker<JobData>(
        QUEUE_NAME,
        body ? async (job) => body(job.data as JobData) : async () => {},
        { connection, concurrency: opts.concurrency },
      );
      worker.on("completed", () => opts.onCompleted());
      worker.on("failed", (_job, err) => opts.onFailed(err));
      worker.on("error", (err) => opts.onFailed(err));
      await worker.waitUntilReady();
      return { close: () => worker.close() };
    },
    async hold(): Promise<Hold> {
      const queue = new Queue(QUEUE_NAME, { connection });
      await queue.waitUntilReady();
      await queue.pause();
      return {
        how: "queue.pause() before the fill; released by queue.resume()",
        queuePause: true,
        release: () => queue.resume(),
        close: () => queue.close(),
      };
    },
    async waiting() {
      const queue = new Queue(QUEUE_NAME, { connection });
      try {
        return await queue.getWaitingCount();
      } finally {
        await queue.close();
      }
    },
  };
}

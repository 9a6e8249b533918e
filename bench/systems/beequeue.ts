/**
 * bee-queue 2 with the settings its README gives for throughput: producers are not workers and
 * neither side subscribes to or publishes job events (`isWorker: false`, `getEvents: false`,
 * `sendEvents: false`, `storeJobs: false`); the worker removes succeeded jobs
 * (`removeOnSuccess: true`). Batches go through `saveAll` (one pipeline), no-op handler.
 *
 * Delayed jobs: `createJob(data).delayUntil(dueAt)`, run by a worker made with
 * `activateDelayedJobs: true` (its documented switch; it subscribes to `earlierDelayed` and
 * raises due jobs on a timer). bee-queue has no queue-wide pause (`queue.pause` does not exist;
 * `close()` stops the local worker for good), so the resume ramp's hold is the closest honest
 * equivalent: the worker is made and ready (its clients connected, its scripts loaded) while the
 * jobs wait, and `process(concurrency, handler)` is called at the release.
 */
import BeeQueue from "bee-queue";
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

const CLOSE_TIMEOUT_MS = 10_000;

/** bee-queue's hold: the consumers made under it call `process()` only at `release()`. */
class DeferredProcess implements Hold {
  readonly how =
    "no queue-wide pause in bee-queue: the worker is made and ready while the jobs wait; released by its process(concurrency, handler) call";
  readonly queuePause = false;
  readonly starts: (() => void)[] = [];
  async release(): Promise<void> {
    for (const start of this.starts.splice(0)) start();
  }
  async close(): Promise<void> {}
}

export function beequeueAdapter(endpoint: Endpoint): SystemAdapter {
  const redis = { host: endpoint.host, port: endpoint.port };
  const producerSettings: BeeQueue.QueueSettings = {
    redis,
    isWorker: false,
    getEvents: false,
    sendEvents: false,
    storeJobs: false,
  };
  return {
    id: "beequeue",
    settings:
      "producer { isWorker: false, getEvents: false, sendEvents: false, storeJobs: false }; " +
      "worker { getEvents: false, sendEvents: false, storeJobs: false, removeOnSuccess: true }",
    async prepare() {},
    async producer() {
      const queue = new BeeQueue<Payload>(QUEUE_NAME, producerSettings);
      await queue.ready();
      return {
        add: async (data) => {
          await queue.createJob(data).save();
        },
        addBulk: async (batch, dueAt) => {
          if (dueAt !== undefined) delayUntil(dueAt); // throws if the instant has passed
          const jobs = batch.map((data) =>
            dueAt === undefined ? queue.createJob(data) : queue.createJob(data).delayUntil(dueAt),
          );
          const errors = await queue.saveAll(jobs);
          if (errors.size > 0) throw [...errors.values()][0];
        },
        close: () => queue.close(CLOSE_TIMEOUT_MS),
      };
    },
    async consumer(opts: ConsumerOptions) {
      const queue = new BeeQueue<JobData>(QUEUE_NAME, {
        redis,
        isWorker: true,
        getEvents: false,
        sendEvents: false,
        storeJobs: false,
        removeOnSuccess: true,
        ...(opts.delayed ? { activateDelayedJobs: true } : {}),
      });
      queue.on("succeeded", () => opts.onCompleted());
      queue.on("failed", (_job, err) => opts.onFailed(err));
      queue.on("error", (err) => opts.onFailed(err));
      await queue.ready();
      const body = opts.handler;
      const start = () =>
        queue.process(
          opts.concurrency,
          body ? async (job: BeeQueue.Job<JobData>) => body(job.data) : async () => {},
        );
      if (opts.hold instanceof DeferredProcess) opts.hold.starts.push(start);
      else if (opts.hold) throw new Error("bee-queue: a hold from another adapter");
      else start();
      return { close: () => queue.close(CLOSE_TIMEOUT_MS) };
    },
    async hold(): Promise<Hold> {
      return new DeferredProcess();
    },
    async waiting() {
      const queue = new BeeQueue(QUEUE_NAME, producerSettings);
      try {
        return (await queue.checkHealth()).waiting;
      } finally {
        await queue.close(CLOSE_TIMEOUT_MS);
      }
    },
  };
}

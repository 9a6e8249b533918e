/**
 * bee-queue 2 with the settings its README gives for throughput: producers are not workers and
 * neither side subscribes to or publishes job events (`isWorker: false`, `getEvents: false`,
 * `sendEvents: false`, `storeJobs: false`); the worker removes succeeded jobs
 * (`removeOnSuccess: true`). Batches go through `saveAll` (one pipeline), no-op handler.
 */
import BeeQueue from "bee-queue";
import {
  type ConsumerOptions,
  type Endpoint,
  type JobData,
  QUEUE_NAME,
  type SystemAdapter,
} from "./types.js";

const CLOSE_TIMEOUT_MS = 10_000;

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
      const queue = new BeeQueue<JobData>(QUEUE_NAME, producerSettings);
      await queue.ready();
      return {
        add: async (data) => {
          await queue.createJob(data).save();
        },
        addBulk: async (batch) => {
          const errors = await queue.saveAll(batch.map((data) => queue.createJob(data)));
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
      });
      queue.on("succeeded", () => opts.onCompleted());
      queue.on("failed", (_job, err) => opts.onFailed(err));
      queue.on("error", (err) => opts.onFailed(err));
      await queue.ready();
      const onStart = opts.onStart;
      queue.process(
        opts.concurrency,
        onStart
          ? async (job: BeeQueue.Job<JobData>) => {
              onStart(job.data);
            }
          : async () => {},
      );
      return { close: () => queue.close(CLOSE_TIMEOUT_MS) };
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

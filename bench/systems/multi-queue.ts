/**
 * The systems over many queues at once, on one node or on a cluster (the cluster measure,
 * bench/cluster.ts): a producer that adds a batch to any of the queues, and one consumer made of
 * a worker per queue, all in one process. Each role holds one client, shared by its queues, as
 * each library's docs show for many queues in one process:
 *
 * - EchoMQ: one `connect({ nodes, wire })` (on one node `connect({ host, port, wire })`) per
 *   role; a `Queue` and a `Worker(queue, handler, { concurrency, keepCompleted: 0 })` per queue
 *   on it; each worker also holds its wake subscriber (`SSUBSCRIBE` on the queue's shard).
 * - BullMQ: one ioredis-API client per role — `new Cluster(nodes)` on a cluster (BullMQ cannot
 *   build one from options), `new Redis({ host, port })` on one node — given to every `Queue` and
 *   `Worker` as `connection` (each Worker duplicates it for its blocking connection); every queue
 *   gets the hashtag prefix `{<name>}` ("Redis Cluster" in its docs: a prefix in braces per queue,
 *   a different one per queue so that queues spread over the shards), queue name `bench`.
 *   Auto-removal as in the single-node adapter (`removeOnComplete: true, removeOnFail: 1000`).
 *
 * bee-queue has no cluster support (its client is node-redis 3 without cluster mode, and its
 * scripts' keys carry no hashtag), so it is not run here.
 */
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { connect, Queue, Worker } from "echomq";
import { installModuleBrand } from "echomq/admin";
import { Cluster, Redis } from "iovalkey";
import type { Consumer, Endpoint, JobData } from "./types.js";

/** The systems the cluster measure runs (bee-queue has no cluster support). */
export const CLUSTER_SYSTEMS = ["echomq-w4", "echomq-w6", "bullmq"] as const;
export type ClusterSystemId = (typeof CLUSTER_SYSTEMS)[number];

/** Where the queues live: one node (`nodes` has one entry) or a cluster (its seeds). */
export interface Topology {
  cluster: boolean;
  nodes: Endpoint[];
}

interface MultiProducer {
  /** One batch into one queue: the library's bulk call. */
  addBulk(queue: string, batch: JobData[]): Promise<void>;
  close(): Promise<void>;
}

interface MultiConsumerOptions {
  /** Each queue's worker's concurrency. */
  concurrency: number;
  onCompleted: () => void;
  onFailed: (err: unknown) => void;
}

export interface MultiAdapter {
  readonly id: ClusterSystemId;
  readonly settings: string;
  /** After every FLUSHALL (a module node or cluster is branded again). */
  prepare(): Promise<void>;
  producer(queues: readonly string[]): Promise<MultiProducer>;
  /** A worker per queue, started at once; resolves when every one is ready. */
  consumer(queues: readonly string[], opts: MultiConsumerOptions): Promise<Consumer>;
  /** Jobs waiting in each queue, in order. */
  waiting(queues: readonly string[]): Promise<number[]>;
}

export function multiAdapterFor(system: ClusterSystemId, topology: Topology): MultiAdapter {
  return system === "bullmq" ? bullmqMulti(topology) : echomqMulti(topology, system === "echomq-w4" ? 4 : 6);
}

function echomqMulti(topology: Topology, wire: 4 | 6): MultiAdapter {
  const first = topology.nodes[0]!;
  const target = topology.cluster
    ? ({ nodes: topology.nodes, wire } as const)
    : ({ host: first.host, port: first.port, wire } as const);
  return {
    id: wire === 4 ? "echomq-w4" : "echomq-w6",
    settings:
      `one connect({ ${topology.cluster ? "nodes" : "host, port"}, wire: ${wire} }) per role; ` +
      "a Worker { concurrency, keepCompleted: 0 } per queue (defaults otherwise)",
    async prepare() {
      if (wire === 6) await installModuleBrand(target);
    },
    async producer(queues) {
      const conn = await connect(target);
      const byName = new Map(queues.map((name) => [name, new Queue(name, conn)]));
      return {
        addBulk: async (name, batch) => {
          await byName.get(name)!.addBulk(batch.map((data) => ({ payload: JSON.stringify(data) })));
        },
        close: () => conn.close(),
      };
    },
    async consumer(queues, opts) {
      const conn = await connect(target);
      const workers = queues.map((name) => {
        const worker = new Worker(new Queue(name, conn), () => {}, {
          concurrency: opts.concurrency,
          keepCompleted: 0,
        });
        worker.on("completed", () => opts.onCompleted());
        worker.on("failed", (_job, err) => opts.onFailed(err));
        worker.on("error", (err) => opts.onFailed(err));
        return worker;
      });
      try {
        await Promise.all(workers.map((w) => w.ready));
      } catch (err) {
        await Promise.allSettled(workers.map((w) => w.close()));
        await conn.close();
        throw err;
      }
      return {
        close: async () => {
          await Promise.all(workers.map((w) => w.close()));
          await conn.close();
        },
      };
    },
    async waiting(queues) {
      const conn = await connect(target);
      try {
        return await Promise.all(queues.map(async (name) => (await new Queue(name, conn).counts()).pending));
      } finally {
        await conn.close();
      }
    },
  };
}

const BULL_QUEUE = "bench";
const BULL_JOB_OPTIONS = { removeOnComplete: true, removeOnFail: 1000 } as const;

function bullmqMulti(topology: Topology): MultiAdapter {
  const first = topology.nodes[0]!;
  // Workers need maxRetriesPerRequest: null (BullMQ warns otherwise); producers keep the default.
  const client = (worker: boolean): Redis | Cluster => {
    const options = worker ? { maxRetriesPerRequest: null } : {};
    return topology.cluster
      ? new Cluster(topology.nodes, { redisOptions: options })
      : new Redis({ host: first.host, port: first.port, ...options });
  };
  const prefix = (name: string) => `{${name}}`;
  const quit = async (c: Redis | Cluster) => {
    await c.quit().catch(() => c.disconnect());
  };
  return {
    id: "bullmq",
    settings:
      `one ${topology.cluster ? "Cluster(nodes)" : "Redis({ host, port })"} per role as connection; ` +
      "per queue prefix '{<name>}', Queue { defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } }, " +
      "a Worker { concurrency } per queue",
    async prepare() {},
    async producer(queues) {
      const connection = client(false);
      const byName = new Map(
        queues.map((name) => [
          name,
          new BullQueue<JobData>(BULL_QUEUE, {
            connection,
            prefix: prefix(name),
            defaultJobOptions: BULL_JOB_OPTIONS,
          }),
        ]),
      );
      await Promise.all([...byName.values()].map((q) => q.waitUntilReady()));
      return {
        addBulk: async (name, batch) => {
          await byName.get(name)!.addBulk(batch.map((data) => ({ name: "job", data })));
        },
        close: async () => {
          await Promise.all([...byName.values()].map((q) => q.close()));
          await quit(connection);
        },
      };
    },
    async consumer(queues, opts) {
      const connection = client(true);
      const workers = queues.map((name) => {
        const worker = new BullWorker<JobData>(BULL_QUEUE, async () => {}, {
          connection,
          prefix: prefix(name),
          concurrency: opts.concurrency,
        });
        worker.on("completed", () => opts.onCompleted());
        worker.on("failed", (_job, err) => opts.onFailed(err));
        worker.on("error", (err) => opts.onFailed(err));
        return worker;
      });
      const close = async () => {
        await Promise.allSettled(workers.map((w) => w.close()));
        await quit(connection);
      };
      try {
        await Promise.all(workers.map((w) => w.waitUntilReady()));
      } catch (err) {
        await close();
        throw err;
      }
      return { close };
    },
    async waiting(queues) {
      const connection = client(false);
      try {
        return await Promise.all(
          queues.map(async (name) => {
            const q = new BullQueue(BULL_QUEUE, { connection, prefix: prefix(name) });
            try {
              return await q.getWaitingCount();
            } finally {
              await q.close();
            }
          }),
        );
      } finally {
        await quit(connection);
      }
    },
  };
}

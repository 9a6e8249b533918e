/**
 * EchoMQ, wire 4 (Lua scripts, a plain node) or wire 6 (the native module, a node branded by
 * EMQ.INSTALL). TEMPORARY: drives the host steps (add / claim / complete) until Queue/Worker land.
 */
import { add, claim, complete, connect, installModuleBrand } from "../../src/index.js";
import {
  type ConsumerOptions,
  type Endpoint,
  type JobData,
  QUEUE_NAME,
  type SystemAdapter,
} from "./types.js";

export function echomqAdapter(endpoint: Endpoint, wire: 4 | 6): SystemAdapter {
  const target = { host: endpoint.host, port: endpoint.port, wire } as const;
  return {
    id: wire === 4 ? "echomq-w4" : "echomq-w6",
    settings: "temporary host-step driver",
    async prepare() {
      if (wire === 6) await installModuleBrand(target);
    },
    async producer() {
      const conn = await connect(target);
      return {
        add: async (data) => {
          await add(conn, QUEUE_NAME, JSON.stringify(data));
        },
        addBulk: async (batch) => {
          await Promise.all(batch.map((data) => add(conn, QUEUE_NAME, JSON.stringify(data))));
        },
        close: () => conn.close(),
      };
    },
    async consumer(opts: ConsumerOptions) {
      const conn = await connect(target);
      let closing = false;
      const slot = async () => {
        while (!closing) {
          const job = await claim(conn, QUEUE_NAME, 30_000);
          if (!job) {
            await new Promise((r) => setTimeout(r, 2));
            continue;
          }
          if (opts.onStart) opts.onStart(JSON.parse(job.payload.toString()) as JobData);
          await complete(conn, QUEUE_NAME, job.id, job.attempts, "", 1000);
          opts.onCompleted();
        }
      };
      const slots = Array.from({ length: opts.concurrency }, () => slot().catch(opts.onFailed));
      return {
        close: async () => {
          closing = true;
          await Promise.all(slots);
          await conn.close();
        },
      };
    },
    async waiting() {
      const conn = await connect(target);
      try {
        return Number(await conn.send("ZCARD", [`emq:{${QUEUE_NAME}}:pending`]));
      } finally {
        await conn.close();
      }
    },
  };
}

/**
 * Memory limit: fill a queue with `jobs` jobs, then set `maxmemory` just below the memory in use
 * (`maxmemory-policy noeviction`): `belowFraction` of what the fill took. Then
 *
 * * admissions must be refused with the server's OOM text: `admissions` adds are tried, each must
 *   reject with a `ServerError` whose reply starts with `OOM` (`OutOfMemoryError`, a subclass, is
 *   on its way); `breaches` counts every add that was not refused so;
 * * a worker (`keepCompleted: 0`, as an operator short of memory would run it) must drain the
 *   queue to empty within `drainMs`: jobs left are `stuck`.
 *
 * The limit stays in place for the whole drain (the drain itself brings memory back under it).
 */
import { ServerError, Queue, type Wire, Worker } from "../../src/index.js";
import type { ValkeyServer } from "../../test/support/valkey.js";
import {
  brief,
  checkTargets,
  crashedOnItsOwn,
  connectTo,
  measure,
  type Outcome,
  quietly,
  startFor,
  Tally,
  waitFor,
} from "./common.js";
import { JobsLedger } from "./jobs-ledger.js";

interface MemoryLimitParams {
  jobs: number;
  /** Payload bytes per job. */
  payloadBytes: number;
  /** maxmemory = used − this fraction of the memory the fill took. */
  belowFraction: number;
  /** Adds tried over the limit. */
  admissions: number;
  concurrency: number;
  drainMs: number;
}

export const memoryLimitDefaults = {
  soak: {
    jobs: 50_000,
    payloadBytes: 100,
    belowFraction: 0.05,
    admissions: 1000,
    concurrency: 20,
    drainMs: 60_000,
  },
  suite: {
    jobs: 5000,
    payloadBytes: 100,
    belowFraction: 0.05,
    admissions: 100,
    concurrency: 20,
    drainMs: 10_000,
  },
} satisfies Record<string, MemoryLimitParams>;

const Q = "memory";

async function usedMemory(server: ValkeyServer): Promise<number> {
  const m = /^used_memory:(\d+)/m.exec(String(await server.cli("INFO", "memory")));
  if (!m) throw new Error("INFO memory has no used_memory");
  return Number(m[1]);
}

function isOom(err: unknown): boolean {
  return err instanceof ServerError && err.reply.startsWith("OOM");
}

export function memoryLimit(wire: Wire, p: MemoryLimitParams): Promise<Outcome> {
  return measure("memory limit", wire, { ...p }, async (out) => {
    const server = await startFor(wire, { extraArgs: ["--maxmemory-policy", "noeviction"] });
    const conn = await connectTo(server.port, wire, "emq-producer");
    let worker: Worker | undefined;
    try {
      const queue = new Queue(Q, conn);
      const ledger = new JobsLedger();
      const payload = "m".repeat(p.payloadBytes);
      const before = await usedMemory(server);
      for (let i = 0; i < p.jobs; i += 1000) {
        const n = Math.min(1000, p.jobs - i);
        const added = await queue.addBulk(Array.from({ length: n }, () => ({ payload })));
        for (const a of added) ledger.acked.add(a.id);
      }
      const used = await usedMemory(server);
      const limit = Math.floor(used - (used - before) * p.belowFraction);
      await server.cli("CONFIG", "SET", "maxmemory", String(limit));

      // Admissions over the limit: each must be refused with the server's OOM text.
      const refusals = new Tally();
      let refusedOom = 0;
      for (let i = 0; i < p.admissions; i++) {
        try {
          const { id } = await queue.add(payload);
          ledger.acked.add(id); // accepted over the limit: it must still be drained
          refusals.add("accepted");
        } catch (err) {
          if (isOom(err)) refusedOom += 1;
          refusals.add(brief(err));
        }
      }
      const admittedOverLimit = p.admissions - refusedOom;
      out.breaches += admittedOverLimit;
      if (admittedOverLimit > 0)
        out.failures.push(`${admittedOverLimit} of ${p.admissions} adds over maxmemory not refused with OOM`);

      // The drain, under the same limit.
      const workerConn = await conn.duplicate({ name: "emq-worker" });
      const workerErrors = new Tally();
      worker = new Worker(
        new Queue(Q, workerConn),
        ledger.handler(async () => "ok"),
        {
          concurrency: p.concurrency,
          keepCompleted: 0,
        },
      );
      ledger.follow(worker);
      worker.on("error", (err) => workerErrors.add(brief(err)));
      const t0 = Date.now();
      let firstDone = -1;
      let doneWhileOver = 0;
      worker.on("completed", () => {
        if (firstDone < 0) firstDone = Date.now() - t0;
      });
      await worker.ready;
      const drained = await waitFor(
        async () => {
          const c = await queue.counts();
          if ((await usedMemory(server)) > limit) doneWhileOver = ledger.confirmed.size;
          return c.pending + c.active + c.scheduled === 0 && ledger.allRan();
        },
        p.drainMs,
        50,
      );
      const drainMs = Date.now() - t0;
      await worker.close();
      await workerConn.close();
      out.crashes += await crashedOnItsOwn(server);
      await ledger.settle(out, conn, Q);
      const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
      out.notes.push(
        `used ${mb(used)} after the fill (${mb(used - before)} for the jobs), maxmemory ${mb(limit)}`,
        `adds over the limit: ${refusals.text(3)}`,
        `drain ${drained ? `${drainMs} ms` : `timed out (${p.drainMs} ms)`}: ${ledger.confirmed.size} of ${ledger.acked.size} completed ` +
          `(${doneWhileOver} while used_memory > maxmemory; first after ${firstDone < 0 ? "never" : `${firstDone} ms`})`,
        `worker errors: ${workerErrors.text(2)}`,
      );
      checkTargets(out);
    } finally {
      await quietly(worker?.close());
      await quietly(conn.close());
      await server.stop();
    }
  });
}

/**
 * Connection cuts: a Worker reaches the server through the fault proxy, which cuts every
 * connection (commands, wake subscription) every `everyMs` for `cutForMs`, while the worker
 * processes `jobs` jobs added beforehand on a direct connection. Each handler takes
 * `handlerMs`, so the load outlasts the cuts.
 *
 * Targets: every job completes, 0 lost, 0 stuck, runs twice only among the jobs whose completion
 * was in flight at a cut, and the worker still runs afterwards (a probe job added after the
 * drain completes; `breaches` counts a worker that does not). The load outlasts the cuts, so a
 * backlog is left when they stop: then at least 3/4 of the slots are busy on average, and the
 * worker is back to that many busy slots within 2 s of the last cut. Figures: the average of
 * `worker.activeCount` (busy slots) during and after the cuts, the time until 3/4 of the slots
 * are busy again, and the time to drain the backlog.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Connection, connect, Queue, type Wire, Worker } from "../../src/index.js";
import { startProxy } from "../../test/support/proxy.js";
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

interface ConnectionCutsParams {
  jobs: number;
  concurrency: number;
  /** Time each handler takes (ms). */
  handlerMs: number;
  /** Cut every connection this often (ms)… */
  everyMs: number;
  /** …for this long (ms). */
  cutForMs: number;
  /** Worker lease (ms): a completion lost in a cut waits this long to be reaped and re-run. */
  leaseMs: number;
  /** Bound for the queue to drain after the cuts stop (ms). */
  drainMs: number;
}

export const connectionCutsDefaults = {
  soak: {
    jobs: 20_000,
    concurrency: 20,
    handlerMs: 25,
    everyMs: 300,
    cutForMs: 30_000,
    leaseMs: 2000,
    drainMs: 120_000,
  },
  suite: {
    jobs: 6000,
    concurrency: 20,
    handlerMs: 25,
    everyMs: 300,
    cutForMs: 4000,
    leaseMs: 2000,
    drainMs: 60_000,
  },
} satisfies Record<string, ConnectionCutsParams>;

const Q = "cuts";
const SAMPLE_MS = 50;

function average(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function connectionCuts(wire: Wire, p: ConnectionCutsParams): Promise<Outcome> {
  return measure("connection cuts", wire, { ...p }, async (out) => {
    const server = await startFor(wire);
    const proxy = await startProxy({ targetPort: server.port });
    let direct: Connection | undefined;
    let workerConn: Connection | undefined;
    let worker: Worker | undefined;
    try {
      direct = await connectTo(server.port, wire, "emq-direct");
      const queue = new Queue(Q, direct);
      const ledger = new JobsLedger();
      for (let i = 0; i < p.jobs; i += 1000) {
        const n = Math.min(1000, p.jobs - i);
        const added = await queue.addBulk(Array.from({ length: n }, (_, j) => ({ payload: `c${i + j}` })));
        for (const a of added) ledger.acked.add(a.id);
      }
      workerConn = await connect({ port: proxy.port, wire, name: "emq-cut-worker" });
      const workerErrors = new Tally();
      worker = new Worker(
        new Queue(Q, workerConn),
        ledger.handler(() => sleep(p.handlerMs)),
        {
          concurrency: p.concurrency,
          leaseMs: p.leaseMs,
          reapEveryMs: 250,
          attempts: 100,
          keepCompleted: p.jobs * 2,
        },
      );
      ledger.follow(worker);
      worker.on("error", (err) => workerErrors.add(brief(err)));
      await worker.ready;

      const during: number[] = [];
      const after: number[] = [];
      let phase: number[] = during;
      const sampler = setInterval(() => phase.push(worker!.activeCount), SAMPLE_MS);
      const t0 = Date.now();
      let cuts = 0;
      while (Date.now() - t0 < p.cutForMs) {
        await sleep(p.everyMs);
        ledger.fault();
        proxy.cut();
        cuts += 1;
      }
      phase = after;
      const doneAtStop = ledger.confirmed.size;
      const t1 = Date.now();
      const busy = Math.ceil((p.concurrency * 3) / 4);
      let backToSpeedMs: number | null = null;
      const speedWatch = setInterval(() => {
        if (backToSpeedMs === null && worker!.activeCount >= busy) backToSpeedMs = Date.now() - t1;
      }, 5);
      const caughtUp = await waitFor(
        async () => {
          if (!ledger.allRan()) return false;
          const c = await queue.counts();
          return c.pending + c.active + c.scheduled === 0;
        },
        p.drainMs,
        50,
      );
      const catchUpMs = Date.now() - t1;
      clearInterval(sampler);
      clearInterval(speedWatch);

      // The worker still runs: a job added now completes.
      const probe = await queue.add("probe"); // not in the ledger: not part of the load
      const probeRan = await waitFor(() => ledger.confirmed.has(probe.id), 10_000, 20);
      if (!probeRan) {
        out.breaches += 1;
        out.failures.push("the worker did not run a job added after the cuts (10 s)");
      }
      out.crashes += await crashedOnItsOwn(server);
      await ledger.settle(out, direct, Q);
      const rate = (ms: number, n: number) => (ms > 0 ? Math.round((n * 1000) / ms) : 0);
      out.notes.push(
        `${cuts} cuts; ${doneAtStop} of ${p.jobs} confirmed when the cuts stopped (${rate(p.cutForMs, doneAtStop)} jobs/s)`,
        `busy slots avg ${average(during).toFixed(1)} during the cuts, ${average(after).toFixed(1)} after (of ${p.concurrency})`,
        `${busy} slots busy again ${backToSpeedMs === null ? "never" : `${backToSpeedMs} ms`} after the last cut`,
        `backlog of ${p.jobs - doneAtStop} drained ${caughtUp ? `${catchUpMs} ms` : `not within ${p.drainMs} ms`} after the last cut`,
        `proxy connections accepted ${proxy.stats.accepted}; worker errors: ${workerErrors.text(3)}`,
      );
      if (!caughtUp) out.failures.push(`not caught up ${p.drainMs} ms after the cuts stopped`);
      if (doneAtStop >= p.jobs)
        out.failures.push("no backlog was left when the cuts stopped: the load is too small");
      else {
        if (average(after) < busy) {
          out.failures.push(`busy slots after the cuts averaged ${average(after).toFixed(1)}, under ${busy}`);
        }
        if (backToSpeedMs === null || backToSpeedMs > 2000) {
          out.failures.push(`${busy} slots were not busy again within 2 s of the last cut`);
        }
      }
      checkTargets(out);
    } finally {
      await quietly(worker?.close());
      await quietly(workerConn?.close(), direct?.close(), proxy.close());
      await server.stop();
    }
  });
}

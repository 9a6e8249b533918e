/**
 * Server crash: a server with `appendonly yes` + `appendfsync always` is SIGKILLed mid-load
 * `kills` times and restarted on the same dir, while a producer adds jobs and a Worker processes
 * them. The connections reconnect by themselves.
 *
 * The producer gives every add its own id (`newId()`, the idempotency key): an add whose reply
 * was lost (`ConnectionLostError`, `ConnectionError`) is re-sent with the same id until a reply
 * comes back — `duplicate: true` then means the first send had landed. Only replied adds count as
 * acknowledged. Targets: 0 lost, 0 stuck after the drain timeout, jobs run twice only among those
 * whose completion was in flight at a kill (`breaches` counts the others), 0 crashes of the
 * restarted server.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  type Connection,
  ConnectionError,
  ConnectionLostError,
  Queue,
  type Wire,
  Worker,
} from "../../src/index.js";
import { newId } from "../../src/protocol.js";
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

interface ServerCrashParams {
  /** Jobs the producer adds. */
  adds: number;
  /** SIGKILLs, spread evenly over the load. */
  kills: number;
  /** Adds in flight at once. */
  producers: number;
  /** Worker slots. */
  concurrency: number;
  /** How long the server stays dead before the restart (ms). */
  downMs: number;
  /** Bound for the queue to drain after the last add (ms). */
  drainMs: number;
}

export const serverCrashDefaults = {
  soak: { adds: 10_000, kills: 3, producers: 8, concurrency: 10, downMs: 300, drainMs: 60_000 },
  suite: { adds: 1000, kills: 3, producers: 8, concurrency: 10, downMs: 200, drainMs: 30_000 },
} satisfies Record<string, ServerCrashParams>;

const Q = "crash";
const SEND_TRIES = 100;

export function serverCrash(wire: Wire, p: ServerCrashParams): Promise<Outcome> {
  return measure("server crash", wire, { ...p }, async (out) => {
    const server = await startFor(wire, { aof: true });
    let producerConn: Connection | undefined;
    let workerConn: Connection | undefined;
    let worker: Worker | undefined;
    try {
      producerConn = await connectTo(server.port, wire, "emq-producer");
      workerConn = await connectTo(server.port, wire, "emq-worker");
      const ledger = new JobsLedger();
      const workerErrors = new Tally();
      worker = new Worker(
        new Queue(Q, workerConn),
        ledger.handler(async (job) => {
          await sleep(1 + (job.payload.length % 3));
          return "ok";
        }),
        {
          concurrency: p.concurrency,
          leaseMs: 1500,
          reapEveryMs: 250,
          promoteEveryMs: 250,
          attempts: 50,
          keepCompleted: p.adds * 2,
        },
      );
      ledger.follow(worker);
      worker.on("error", (err) => workerErrors.add(brief(err)));
      await worker.ready;

      const queue = new Queue(Q, producerConn);
      const resends = new Tally();
      let unacked = 0;
      let next = 0;
      const addOne = async (i: number): Promise<void> => {
        const id = newId();
        for (let attempt = 1; attempt <= SEND_TRIES; attempt++) {
          try {
            await queue.add(`job ${i}`, { id });
            ledger.acked.add(id);
            return;
          } catch (err) {
            if (!(err instanceof ConnectionLostError || err instanceof ConnectionError)) throw err;
            resends.add(err.name);
            await sleep(50);
          }
        }
        unacked += 1;
      };
      const producing = Promise.all(
        Array.from({ length: p.producers }, async () => {
          while (next < p.adds) await addOne(next++);
        }),
      );

      const restarts: number[] = [];
      for (let k = 1; k <= p.kills; k++) {
        const at = Math.floor((p.adds * k) / (p.kills + 1));
        await waitFor(() => ledger.acked.size >= at, 120_000, 5);
        ledger.fault();
        await server.crash();
        await sleep(p.downMs);
        // Replies the dead server had sent before the kill are read by now: a handler started
        // since was claimed before the kill too, and its completion cannot have been confirmed.
        ledger.fault();
        const t0 = Date.now();
        await server.restart();
        restarts.push(Date.now() - t0);
      }
      await producing;
      const t1 = Date.now();
      const drained = await waitFor(
        async () => {
          if (!ledger.allRan()) return false;
          const c = await queue.counts();
          return c.pending + c.active + c.scheduled === 0;
        },
        p.drainMs,
        50,
      );
      const drainMs = Date.now() - t1;
      out.crashes += await crashedOnItsOwn(server);
      await ledger.settle(out, producerConn, Q);
      out.notes.push(
        `drain after the last add ${drained ? `${drainMs} ms` : `timed out (${p.drainMs} ms)`}`,
        `restart ${restarts.join("/")} ms`,
        `adds re-sent after a lost reply ${resends.total} (${resends.text()}); never acknowledged ${unacked}`,
        `worker errors: ${workerErrors.text(3)}`,
      );
      if (unacked > 0) out.failures.push(`${unacked} adds never acknowledged after ${SEND_TRIES} sends`);
      checkTargets(out);
    } finally {
      await quietly(worker?.close());
      await quietly(producerConn?.close(), workerConn?.close());
      await server.stop();
    }
  });
}

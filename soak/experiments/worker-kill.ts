/**
 * Worker kill: a Worker in a child process (`test/fixtures/worker-process.ts`: concurrency 10,
 * lease 800 ms, the logging handler that records every run on the server) is SIGKILLed mid-load,
 * `kills` times (a new child each time); then a Worker in this process, with the same handler,
 * finishes the queue.
 *
 * At each kill the jobs the dead child held are what `active` holds once the server has dropped
 * its connections. Targets: every job runs and completes (0 lost, 0 stuck), and a job runs more
 * than once only if a killed child held it (`breaches` counts the others). `completed twice`
 * here counts jobs whose handler started more than once (the handler logs at its start).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Redis } from "iovalkey";
import { type Connection, Queue, type Wire, Worker } from "../../src/index.js";
import { queueKey } from "../../src/protocol.js";
import { LOG_KEY, loggingHandler, RUNS_KEY } from "../../test/fixtures/log-handler.js";
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
  whereAre,
  within,
} from "./common.js";

interface WorkerKillParams {
  jobs: number;
  kills: number;
  /** Bound for the last worker to finish the queue (ms). */
  drainMs: number;
}

export const workerKillDefaults = {
  soak: { jobs: 5000, kills: 3, drainMs: 120_000 },
  suite: { jobs: 400, kills: 1, drainMs: 60_000 },
} satisfies Record<string, WorkerKillParams>;

const Q = "kill";
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../../test/fixtures/worker-process.ts", import.meta.url));

function spawnChild(
  port: number,
  wire: Wire,
): { child: ChildProcess; ready: Promise<void>; exited: Promise<void> } {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, String(port), String(wire), Q], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      if (String(d).includes("ready")) resolve();
    });
    child.once("exit", (code, signal) =>
      reject(new Error(`child worker exited (${code ?? signal}) before ready: ${stderr}`)),
    );
  });
  ready.catch(() => {});
  return { child, ready, exited };
}

export function workerKill(wire: Wire, p: WorkerKillParams): Promise<Outcome> {
  return measure("worker kill", wire, { ...p }, async (out) => {
    const server = await startFor(wire);
    const r = new Redis({ host: "127.0.0.1", port: server.port, maxRetriesPerRequest: 0 });
    r.on("error", () => {});
    const log = r.duplicate();
    let conn: Connection | undefined;
    let wConn: Connection | undefined;
    let w: Worker | undefined;
    let child: ChildProcess | undefined;
    try {
      conn = await connectTo(server.port, wire);
      const queue = new Queue(Q, conn);
      const ids: string[] = [];
      for (let i = 0; i < p.jobs; i += 1000)
        for (const a of await queue.addBulk(
          Array.from({ length: Math.min(1000, p.jobs - i) }, (_, j) => ({ payload: `k${i + j}` })),
        ))
          ids.push(a.id);
      out.acknowledged = ids.length;

      const held = new Set<string>();
      const heldPerKill: number[] = [];
      for (let k = 1; k <= p.kills; k++) {
        const kid = spawnChild(server.port, wire);
        child = kid.child;
        await within("the child worker to be ready", kid.ready, 60_000);
        const target = Math.floor((p.jobs * k) / (p.kills + 1));
        const loaded = await waitFor(
          async () =>
            Number(await r.scard(LOG_KEY)) >= target && Number(await r.zcard(queueKey(Q, "active"))) > 0,
          120_000,
          5,
        );
        if (!loaded) throw new Error(`child ${k} never reached ${target} logged jobs with some active`);
        kid.child.kill("SIGKILL");
        await within("the child to exit", kid.exited, 10_000);
        // Commands the child wrote before dying still run; once its connections are gone, `active` is final.
        await waitFor(async () => !/ name=emq-(child|wake-)/.test(String(await r.client("LIST"))), 10_000);
        const now = await r.zrange(queueKey(Q, "active"), 0, -1);
        heldPerKill.push(now.length);
        for (const id of now) held.add(id);
      }
      child = undefined;

      wConn = await conn.duplicate({ name: "emq-finisher" });
      w = new Worker(new Queue(Q, wConn), loggingHandler(log), {
        concurrency: 10,
        leaseMs: 5000,
        reapEveryMs: 100,
        keepCompleted: p.jobs * 2,
      });
      const errors = new Tally();
      const stalled: string[] = [];
      w.on("error", (err) => errors.add(brief(err)));
      w.on("stalled", (requeued, dead) => stalled.push(...requeued, ...dead));
      const t0 = Date.now();
      await w.ready;
      const finished = await waitFor(async () => (await queue.counts()).completed >= p.jobs, p.drainMs, 50);
      const finishMs = Date.now() - t0;
      await w.close();

      const where = await whereAre(conn, Q);
      const logged = new Set(await r.smembers(LOG_KEY));
      const runs = await r.hgetall(RUNS_KEY);
      let rerunOutsideHeld = 0;
      for (const id of ids) {
        const set = where.get(id);
        if (set === undefined) {
          if (!logged.has(id)) out.lost += 1; // never ran, and gone
        } else if (set !== "done") out.stuck += 1;
        const n = Number(runs[id] ?? 0);
        if (n > 1) {
          out.completedTwice += 1;
          if (!held.has(id)) rerunOutsideHeld += 1;
        }
      }
      out.breaches += rerunOutsideHeld;
      out.crashes += await crashedOnItsOwn(server);
      out.notes.push(
        `held at each kill ${heldPerKill.join("/")}; run more than once ${out.completedTwice} (outside the held ${rerunOutsideHeld})`,
        `finisher ${finished ? `${finishMs} ms` : `timed out (${p.drainMs} ms)`}, reaped ${stalled.length}; errors: ${errors.text(2)}`,
      );
      checkTargets(out);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await quietly(w?.close());
      await quietly(wConn?.close(), conn?.close());
      log.disconnect();
      r.disconnect();
      await server.stop();
    }
  });
}

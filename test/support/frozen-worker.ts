/**
 * A worker frozen past its lease (`test/fixtures/lease-process.ts` in a child process, stopped
 * with SIGSTOP): its claim is answered while it is frozen, the lease runs out, a second worker
 * takes the job, and the frozen one is thawed (SIGCONT) while the second one's handler runs. What
 * each did is read from the child's lines and the second worker's events, in order — no timings.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Connection } from "../../src/index.js";
import { Queue, Worker } from "../../src/index.js";
import { until } from "./until.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../fixtures/lease-process.ts", import.meta.url));

export interface FrozenWorker {
  readonly pid: number;
  /** Every line the child wrote, in order. */
  readonly lines: string[];
  freeze(): void;
  thaw(): void;
  /** Thaws it, asks it to close (SIGTERM), and SIGKILLs it if it has not exited within 5 s. */
  stop(): Promise<void>;
}

/**
 * Starts the child worker on `queue` with a `brief` handler (runs 100 ms) or one that waits for
 * its `signal`; resolves once its slot runs.
 */
export async function startFrozenWorker(
  target: { port: number } | { nodes: readonly { host: string; port: number }[] },
  wire: number,
  queue: string,
  handler: "brief" | "signal" = "brief",
): Promise<FrozenWorker> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", CHILD, JSON.stringify(target), String(wire), queue, handler],
    { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  let stderr = "";
  let rest = "";
  child.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  child.stdout!.on("data", (d) => {
    const got = (rest + String(d)).split("\n");
    rest = got.pop() ?? "";
    lines.push(...got);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await until(
      "the child worker's ready line",
      () => {
        if (child.exitCode !== null) throw new Error(`child exited (${child.exitCode}): ${stderr}`);
        return lines.includes("ready");
      },
      30_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    pid: child.pid!,
    lines,
    freeze: () => child.kill("SIGSTOP"),
    thaw: () => child.kill("SIGCONT"),
    stop,
  };
}

interface ExpiredClaim {
  /** The frozen worker's lines about the job, in order (`start …`, `end …`, `lost …`). */
  frozen: string[];
  /** The second worker's handler runs of the job: `start <attempts>` / `end`, in order. */
  second: string[];
  /** The job's state and attempts once the second worker completed it. */
  state: string;
  attempts: number;
}

/**
 * The scenario. `claimWhileFrozen` adds a job and freezes the child so that its claim of it is
 * answered while it is frozen (wire 6: it waits in `EMQ.BCLAIM`; wire 4: a proxy holds its claim
 * until it is frozen); it resolves with the job's id. Then: the job is active under the child's
 * lease; a second worker (this process, its reaper every 50 ms) takes it back once the lease is
 * out and runs it, its handler held until the child, thawed, has dealt with its stale claim
 * (started the handler, or reported the lease lost).
 */
export async function expiredClaim(
  conn: Connection,
  queue: string,
  child: FrozenWorker,
  claimWhileFrozen: (q: Queue) => Promise<string>,
): Promise<ExpiredClaim> {
  const q = new Queue(queue, conn);
  const id = await claimWhileFrozen(q);
  await until("the frozen worker's lease on the job", async () => (await q.getJob(id))?.state === "active");
  const second: string[] = [];
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const worker = new Worker(
    q,
    async (job) => {
      second.push(`start ${job.attempts}`);
      await Promise.race([held, new Promise((resolve) => setTimeout(resolve, 60_000).unref())]);
      second.push("end");
      return "second";
    },
    { concurrency: 1, reapEveryMs: 50, promoteEveryMs: 50 },
  );
  worker.on("error", () => {});
  try {
    await until("the second worker's run of the job", () => second.length > 0, 30_000);
    child.thaw();
    const about = () => child.lines.filter((line) => line.split(" ")[1] === id);
    await until("the thawed worker's handling of its stale claim", () => about().length > 0, 30_000);
    letGo();
    await until("the job's completion", async () => (await q.getJob(id))?.state === "completed", 30_000);
    const { state, attempts } = (await q.getJob(id))!;
    return { frozen: about().map((line) => line.replace(` ${id}`, "")), second, state, attempts };
  } finally {
    letGo();
    await worker.close();
  }
}

/** The number of clients blocked on the node that holds `queue` (`INFO clients`). */
export async function blockedClients(conn: Connection, routeKey: string): Promise<number> {
  const info = String(await conn.send("INFO", ["clients"], routeKey));
  return Number(/blocked_clients:(\d+)/.exec(info)?.[1] ?? 0);
}

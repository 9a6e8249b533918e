/**
 * Child processes running schedule workers (`test/fixtures/schedule-process.ts`), and what they
 * report: every job each ran, by queue.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { instantId } from "../../src/schedules/options.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../fixtures/schedule-process.ts", import.meta.url));

interface ScheduleChildren {
  /** Job ids run, by queue, in the order reported (from every child). */
  jobs: Map<string, string[]>;
  /** When each job's handler started (ms, the machine's clock), by id. */
  startedAt: Map<string, number>;
  /** Sends SIGTERM to every child and waits for them to exit (they close their workers first). */
  stop(): Promise<void>;
}

/** Starts `n` children, each with two workers per queue; resolves once all are ready. */
export async function startScheduleChildren(
  n: number,
  target: { port: number } | { nodes: readonly { host: string; port: number }[] },
  wire: number,
  queues: readonly string[],
): Promise<ScheduleChildren> {
  const jobs = new Map<string, string[]>(queues.map((q) => [q, []]));
  const startedAt = new Map<string, number>();
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", CHILD, JSON.stringify(target), String(wire), queues.join(",")],
      {
        cwd: REPO,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(child);
    let stderr = "";
    let rest = "";
    child.stderr!.on("data", (d) => {
      stderr += String(d);
    });
    ready.push(
      new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (d) => {
          const lines = (rest + String(d)).split("\n");
          rest = lines.pop() ?? "";
          for (const line of lines) {
            if (line === "ready") resolve();
            const [kind, queue, id, at] = line.split(" ");
            if (kind === "job" && queue && id) {
              jobs.get(queue)?.push(id);
              startedAt.set(id, Number(at));
            }
          }
        });
        child.once("exit", (code, signal) =>
          reject(new Error(`child exited (${code ?? signal}) before ready: ${stderr}`)),
        );
      }),
    );
  }
  try {
    await Promise.all(ready);
  } catch (err) {
    for (const child of children) child.kill("SIGKILL");
    throw err;
  }
  return {
    jobs,
    startedAt,
    stop: async () => {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once("exit", () => resolve());
              child.kill("SIGTERM");
            }),
        ),
      );
    },
  };
}

/** The step (k, for the instant first + k·everyMs) of each id; -1 for an id of no instant. */
export function stepsOf(
  queue: string,
  name: string,
  ids: readonly string[],
  first: number,
  everyMs: number,
): number[] {
  const byId = new Map<string, number>();
  for (let k = 0; k < 10_000; k++) byId.set(instantId(queue, name, first + k * everyMs), k);
  return ids.map((id) => byId.get(id) ?? -1).sort((a, b) => a - b);
}

/** Percentiles (p50, p95, max) of `values`, rounded to ms. */
export function spread(values: readonly number[]): { p50: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN);
  return { p50: at(0.5), p95: at(0.95), max: Math.round(sorted.at(-1) ?? Number.NaN) };
}

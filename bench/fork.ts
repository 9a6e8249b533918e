/**
 * The orchestrator's children and servers: one child process per system and round
 * (bench/child.ts), and what an interrupted run must stop (the running child, every server).
 */
import { type ChildProcess, fork } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");

/** What an interrupted run must stop: the running child, the servers (single nodes and clusters). */
export const live = {
  stopping: false,
  children: new Set<ChildProcess>(),
  servers: new Set<{ stop(): Promise<void> }>(),
};

/**
 * `ECHOMQ_BENCH_CPU_PROF=<dir>`: every child writes a V8 CPU profile there (`--cpu-prof`), to be
 * read in Chrome's DevTools or summed by `node --import tsx bench/profile.ts <dir>`.
 */
function cpuProfile(): string[] {
  const dir = process.env.ECHOMQ_BENCH_CPU_PROF;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

/** Runs `plan` in a child of its own (bench/child.ts); kills it after `timeoutMs`. */
export function runChild<R>(plan: { system: string }, timeoutMs: number): Promise<R> {
  return new Promise((resolvePromise, reject) => {
    const child = fork(join(here, "child.ts"), [], {
      cwd: root,
      execArgv: ["--import", "tsx", ...cpuProfile()],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    live.children.add(child);
    child.once("exit", () => live.children.delete(child));
    let result: R | undefined;
    let fatal: string | undefined;
    const timer = setTimeout(() => {
      fatal = `${plan.system}: child killed after ${timeoutMs} ms`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("message", (msg: R | { fatal: string }) => {
      if (msg && typeof msg === "object" && "fatal" in msg) fatal = `${plan.system}: ${msg.fatal}`;
      else result = msg as R;
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (result) resolvePromise(result);
      else reject(new Error(fatal ?? `${plan.system}: child exited (${code ?? signal}) without a result`));
    });
    child.send(plan);
  });
}

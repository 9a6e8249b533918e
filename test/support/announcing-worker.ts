/**
 * `test/fixtures/announcing-worker.ts` as a child process: started, awaited until it says
 * `ready`, killed with SIGKILL (its connections dropped by the kernel, not closed by it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ConnectOptions } from "../../src/index.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/announcing-worker.ts", import.meta.url));

interface ChildWorker {
  pid: number;
  kill(): Promise<void>;
}

export async function startChildWorker(
  options: ConnectOptions,
  queue: string,
  concurrency: number,
): Promise<ChildWorker> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", FIXTURE, JSON.stringify(options), queue, String(concurrency)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) =>
      reject(new Error(`the child worker exited (${code}) before ready: ${stderr}`)),
    );
  });
  return {
    pid: child.pid!,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * A sandboxed processor: BullMQ's processor file, run for each job in a worker thread of its own
 * (its default export, or the module itself, is called with the job). The job the thread sees
 * carries the job's fields and `updateProgress` / `log`, which the thread asks the worker to do
 * (the worker holds the lease); the thread's result or error settles the attempt. A thread is
 * ended when its job settles, when the attempt is aborted (lease lost, worker closed) or when it
 * exits early (an error naming its exit code).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker as Thread } from "node:worker_threads";
import { InvalidArgumentError } from "../errors.js";
import type { Job } from "./job.js";

/** The thread's code: load the file, call its processor, relay calls and the outcome. */
const BOOT = `
const { parentPort, workerData } = require("node:worker_threads");
const { pathToFileURL } = require("node:url");
let next = 0;
const waiting = new Map();
parentPort.on("message", (m) => {
  const w = waiting.get(m.id);
  waiting.delete(m.id);
  if (w) ("error" in m ? w.reject(new Error(m.error)) : w.resolve(m.value));
});
const ask = (call, value) =>
  new Promise((resolve, reject) => {
    const id = ++next;
    waiting.set(id, { resolve, reject });
    parentPort.postMessage({ call, id, value });
  });
(async () => {
  try {
    const mod = await import(pathToFileURL(workerData.file).href);
    const f = [mod.default, mod.default && mod.default.default, mod].find((x) => typeof x === "function");
    if (!f) throw new TypeError("the processor file exports no function (export default async (job) => …)");
    const job = {
      ...workerData.job,
      updateProgress: async (value) => {
        await ask("progress", value);
        job.progress = value;
      },
      log: (line) => ask("log", line),
      updateData: async (value) => {
        await ask("updateData", value);
        job.data = value;
      },
    };
    parentPort.postMessage({ done: true, value: await f(job) });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    parentPort.postMessage({ done: false, name: e.name, message: e.message, stack: e.stack });
  }
})();
`;

/** The processor file as an absolute path; one that does not exist is refused, naming it. */
export function processorFile(processor: string | URL): string {
  const file = processor instanceof URL ? fileURLToPath(processor) : resolve(processor);
  if (!existsSync(file))
    throw new InvalidArgumentError("processor", `is a file that does not exist: ${file}`);
  return file;
}

/** Runs `job` through the processor file in a thread of its own; settles as the processor does. */
export function runSandboxed(file: string, job: Job, signal: AbortSignal): Promise<unknown> {
  const fields = {
    id: job.id,
    name: job.name,
    data: job.data,
    opts: job.opts,
    queueName: job.queueName,
    attemptsMade: job.attemptsMade,
    attemptsStarted: job.attemptsStarted,
    timestamp: job.timestamp,
    processedOn: job.processedOn,
    progress: job.progress,
  };
  const thread = new Thread(BOOT, { eval: true, workerData: { file, job: fields } });
  return new Promise<unknown>((resolve, reject) => {
    const stop = () => reject(signal.reason ?? new Error("the attempt was aborted"));
    signal.addEventListener("abort", stop, { once: true });
    thread.on("message", (m) => {
      if ("call" in m) {
        const step =
          m.call === "progress"
            ? job.updateProgress(m.value)
            : m.call === "updateData"
              ? job.updateData(m.value)
              : job.log(String(m.value));
        step.then(
          (value) => thread.postMessage({ id: m.id, value }),
          (err: unknown) => thread.postMessage({ id: m.id, error: (err as Error)?.message ?? String(err) }),
        );
      } else if (m.done) resolve(m.value);
      else {
        const error = new Error(m.message);
        error.name = m.name;
        error.stack = m.stack;
        reject(error);
      }
    });
    thread.on("error", reject);
    thread.on("exit", (code) =>
      reject(new Error(`the sandboxed processor's thread exited (code ${code}) before its job settled`)),
    );
  }).finally(() => void thread.terminate());
}

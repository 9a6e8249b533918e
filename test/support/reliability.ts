/** What the reliability tests share: plain clients, row counts, INFO fields, a worker in a child process. */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Redis } from "iovalkey";
import type { Connection, Worker } from "../../src/index.js";
import type { ValkeyServer } from "./valkey.js";
import { queueKey as keyText } from "../../src/keyspace.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CHILD_WORKER = fileURLToPath(new URL("../fixtures/worker-process.ts", import.meta.url));

/** `promise`, or a rejection naming `what` after `ms`. */
export async function within<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A plain iovalkey client that fails fast and stays quiet on errors. */
export function plainClient(port: number): Redis {
  const r = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 0 });
  r.on("error", () => {});
  return r;
}

/** Job rows of queue `q` by their `state` field (SCAN over `emq:{q}:job:*`). */
export async function rowsByState(r: Redis, q: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `${keyText(q, "job:")}*`, "COUNT", 5000);
    cursor = next;
    const states = await Promise.all(keys.map((k) => r.hget(k, "state")));
    for (const s of states) out[String(s)] = (out[String(s)] ?? 0) + 1;
  } while (cursor !== "0");
  return out;
}

/** How many job rows queue `q` has (SCAN count of `emq:{q}:job:*`). */
export async function countRows(r: Redis, q: string): Promise<number> {
  let n = 0;
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `${keyText(q, "job:")}*`, "COUNT", 10_000);
    cursor = next;
    n += keys.length;
  } while (cursor !== "0");
  return n;
}

/** The integer field `field` of an INFO reply. */
export function infoField(info: unknown, field: string): number {
  const m = new RegExp(`^${field}:(\\d+)`, "m").exec(String(info));
  if (!m) throw new Error(`INFO has no ${field}`);
  return Number(m[1]);
}

/** `cmdstat_<name>:calls=<n>` of INFO commandstats, as a map. */
export function commandCalls(info: unknown): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of String(info).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

/** Fails listing `errors` unless there are none. */
export function noErrors(errors: readonly unknown[]): void {
  assert.equal(errors.length, 0, `unexpected: ${errors.map(String).join("; ")}`);
}

/** The sum of `xs`. */
export function sum(xs: Iterable<number>): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** Slots waiting for work: on the wake gate, and (wire 6) the one waiting inside the server. */
export function idleSlots(w: Worker): number {
  const worker = w as unknown as { gate: { waiting: number }; blocking: { held: boolean } };
  return worker.gate.waiting + (worker.blocking.held ? 1 : 0);
}

interface ChildWorker {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<void>;
  stderr(): string;
}

/**
 * A worker in its own process (fixtures/worker-process.ts, or another fixture taking the same
 * arguments), to be killed mid-job.
 */
export function spawnChildWorker(
  port: number,
  wire: number,
  queue: string,
  fixture = CHILD_WORKER,
): ChildWorker {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, String(port), String(wire), queue], {
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
      reject(new Error(`child worker exited (code ${code}, signal ${signal}) before ready: ${stderr}`)),
    );
  });
  ready.catch(() => {});
  return { child, ready, exited, stderr: () => stderr };
}

/** Stops a worker and closes its connection, whatever state the test left them in. */
export async function shut(w: Worker | undefined, conn: Connection | undefined): Promise<void> {
  await w?.close().catch(() => {});
  await conn?.close().catch(() => {});
}

/** The server's clock in ms (TIME). */
export async function serverNowMs(server: ValkeyServer): Promise<number> {
  const [s, us] = (await server.cli("TIME")) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

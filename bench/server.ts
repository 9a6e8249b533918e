/**
 * The bench's own valkey-server processes (loopback, a free port, a temp dir, no RDB snapshots;
 * AOF only when asked) and the INFO readers the measurements bracket their phases with.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Redis } from "iovalkey";
import { startEmbeddedValkey, valkeyServerBinary } from "../tools/embedded-valkey.js";

const execFileAsync = promisify(execFile);

interface ServerOptions {
  /** Path of a module to load (`--loadmodule`). */
  module?: string;
  /** appendonly yes + appendfsync everysec. */
  aof: boolean;
}

export interface BenchServer {
  readonly host: "127.0.0.1";
  readonly port: number;
  readonly pid: number;
  readonly module: boolean;
  readonly aof: boolean;
  stop(): Promise<void>;
}

/** A bench node: the project's embedded server (`tools/embedded-valkey.ts`) with the bench's options. */
export async function startServer(opts: ServerOptions): Promise<BenchServer> {
  const server = await startEmbeddedValkey({
    aof: opts.aof,
    ...(opts.module ? { module: opts.module } : {}),
  });
  const { host, port, pid } = server;
  return { host, port, pid, module: Boolean(opts.module), aof: opts.aof, stop: () => server.stop() };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Parses INFO text into `field -> value`. */
export function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\r\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.indexOf(":");
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1));
  }
  return out;
}

/** One snapshot of what a phase is charged for on the server. */
export interface ServerSample {
  /** used_cpu_sys + used_cpu_user, seconds. */
  cpuSeconds: number;
  /** Sum of `calls` over INFO commandstats, without `info` itself (the bench's own reads). */
  commands: number;
  /** Calls per command (without `info`). */
  perCommand: Record<string, number>;
  usedMemory: number;
}

/** The bench's admin connection to one server: flush, INFO readers, version. */
export class Admin {
  readonly client: Redis;

  constructor(port: number) {
    this.client = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 1 });
    this.client.on("error", () => {});
  }

  async open(): Promise<this> {
    await this.client.connect();
    return this;
  }

  async info(section: string): Promise<Map<string, string>> {
    return parseInfo(String(await this.client.info(section)));
  }

  /** FLUSHALL SYNC, then waits (bounded) until lazyfree_pending_objects is 0. */
  async flush(timeoutMs = 30_000): Promise<void> {
    await this.client.call("FLUSHALL", "SYNC");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = Number((await this.info("memory")).get("lazyfree_pending_objects") ?? "0");
      if (pending === 0) return;
      if (Date.now() > deadline) throw new Error(`lazyfree_pending_objects still ${pending} after flush`);
      await sleep(10);
    }
  }

  async sample(): Promise<ServerSample> {
    const text = String(await this.client.call("INFO", "cpu", "commandstats", "memory"));
    const info = parseInfo(text);
    const perCommand: Record<string, number> = {};
    let commands = 0;
    for (const [key, value] of info) {
      if (!key.startsWith("cmdstat_") || key === "cmdstat_info") continue;
      const calls = Number(/calls=(\d+)/.exec(value)?.[1] ?? "0");
      perCommand[key.slice("cmdstat_".length)] = calls;
      commands += calls;
    }
    return {
      cpuSeconds: Number(info.get("used_cpu_sys") ?? "0") + Number(info.get("used_cpu_user") ?? "0"),
      commands,
      perCommand,
      usedMemory: Number(info.get("used_memory") ?? "0"),
    };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

/** What a phase cost on the server between two samples. */
export interface ServerDelta {
  cpuSeconds: number;
  commands: number;
  perCommand: Record<string, number>;
  memory: number;
}

export function delta(before: ServerSample, after: ServerSample): ServerDelta {
  const perCommand: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.perCommand)) {
    const d = calls - (before.perCommand[name] ?? 0);
    if (d > 0) perCommand[name] = d;
  }
  return {
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    commands: after.commands - before.commands,
    perCommand,
    memory: after.usedMemory - before.usedMemory,
  };
}

/** Runs valkey-benchmark with one custom command; returns requests per second. */
export async function valkeyBenchmark(port: number, command: string[], n: number): Promise<number> {
  const args = ["-h", "127.0.0.1", "-p", String(port), "-P", "16", "-n", String(n), "-r", "100000", "-q"];
  const { stdout } = await execFileAsync("valkey-benchmark", [...args, ...command], {
    timeout: 120_000,
    maxBuffer: 1 << 20,
  });
  // "-q" prints progress with \r, then "<name>: <rate> requests per second, p50=…"
  const last = stdout.split(/[\r\n]/).filter((l) => /requests per second/.test(l));
  const rate = Number(/([\d.]+) requests per second/.exec(last.at(-1) ?? "")?.[1]);
  if (!Number.isFinite(rate) || rate <= 0) throw new Error(`cannot parse valkey-benchmark output: ${stdout}`);
  return rate;
}

export async function valkeyVersion(): Promise<string> {
  const { stdout } = await execFileAsync(valkeyServerBinary(), ["--version"]);
  // the version and the binary's allocator (Debian's: jemalloc; the pinned Valkey 9: libc)
  const version = /v=(\S+)/.exec(stdout)?.[1];
  const malloc = /malloc=(\S+)/.exec(stdout)?.[1];
  return version === undefined ? stdout.trim() : `${version}${malloc ? ` (malloc=${malloc})` : ""}`;
}

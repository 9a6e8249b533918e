/**
 * Throwaway valkey-server processes, for the demo, the stand and the bench, and — through
 * test/support/valkey.ts, which adds ACL users, cluster mode, replicas, passwords, restart and
 * crash on top — for the tests and the harness. Each listens on loopback on a free port, lives in
 * its own temp dir (its output in `stdout.log` there), takes no RDB snapshots (AOF only when
 * asked), and is killed, its dir removed, when this process exits, however it exits normally.
 *
 *   const server = await startEmbeddedValkey({ module: modulePath() });
 *   await server.stop();              // SIGTERM (SIGKILL after 10 s), then the dir is removed
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { RespClient, text } from "../harness/resp.js";

const HOST = "127.0.0.1";

/**
 * The server binary every throwaway server runs: `ECHOMQ_VALKEY_SERVER` (a path, e.g. the pinned
 * Valkey 9 that scripts/setup.sh puts in `.valkey9/valkey-server`), else `valkey-server` on the
 * PATH (Debian's Valkey 8).
 */
export function valkeyServerBinary(): string {
  return process.env.ECHOMQ_VALKEY_SERVER || "valkey-server";
}

let major: number | undefined;

/** The major version of [`valkeyServerBinary`] (`--version`: `v=<major>.…`), read once. */
export function valkeyMajor(): number {
  if (major === undefined) {
    const out = execFileSync(valkeyServerBinary(), ["--version"], { encoding: "utf8" });
    major = Number(/v=(\d+)\./.exec(out)?.[1] ?? Number.NaN);
    if (!Number.isInteger(major)) throw new Error(`cannot read the server's version from: ${out.trim()}`);
  }
  return major;
}
const START_ATTEMPTS = 5;
const STOP_GRACE_MS = 10_000;
const KILL_WAIT_MS = 5000;
const POLL_MS = 25;

interface EmbeddedValkeyOptions {
  /** Path of a module to load (`--loadmodule`), and the arguments it takes. */
  module?: string;
  moduleArgs?: string[];
  /** `appendonly yes` + `appendfsync everysec`. Default off. */
  aof?: boolean;
  /** Writes a config file into the new dir (before each start) and returns its path: read first. */
  configFile?: (dir: string, port: number) => Promise<string>;
  /** More server arguments, after the defaults (a later one wins), e.g. ["--maxmemory", "10mb"]. */
  extraArgs?: string[];
  /** The default user's password, when the config sets one: the readiness probe authenticates. */
  password?: string;
  /** Keep the dir after stop() (it is still removed when this process exits). */
  keepDir?: boolean;
  /** Bound for the server to answer PING and finish loading; default 10000 ms. */
  startTimeoutMs?: number;
}

/* ------------------------------------------------------------------ process-exit cleanup */

const live = new Map<number, { dir: string; keepDir: boolean }>();

/** Kills every server this process started and still runs, and removes their dirs. */
export function killAll(): void {
  for (const [pid, entry] of live) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
    if (!entry.keepDir) rmSync(entry.dir, { recursive: true, force: true });
  }
  live.clear();
}

process.on("exit", killAll);

/* ------------------------------------------------------------------ helpers */

/** A port that was free on 127.0.0.1 a moment ago (bind port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The port was taken between `freePort` and the server's bind: try another. */
export class AddressInUseError extends Error {}

function tailOf(file: string, lines: number): string {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/* ------------------------------------------------------------------ the server */

export class EmbeddedValkey {
  readonly host = HOST;
  /** Where the server's output (its log) goes. */
  readonly logFile: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private exitNote: string | null = null;
  private removed = false;

  constructor(
    readonly dir: string,
    readonly port: number,
    private readonly opts: EmbeddedValkeyOptions,
  ) {
    this.logFile = join(dir, "stdout.log");
  }

  /** Pid of the current process (it changes when launched again). */
  get pid(): number {
    return this.child?.pid ?? -1;
  }

  logTail(lines = 30): string {
    return tailOf(this.logFile, lines);
  }

  /** Spawns the server on this port and dir and waits until it answers; on failure it is halted. */
  async launch(): Promise<void> {
    if (this.removed) throw new Error(`valkey-server on port ${this.port} was stopped and its dir removed`);
    const o = this.opts;
    const config = o.configFile ? [await o.configFile(this.dir, this.port)] : [];
    const args = [...config, "--port", String(this.port), "--bind", HOST, "--dir", this.dir, "--save", ""];
    args.push("--appendonly", o.aof ? "yes" : "no", ...(o.aof ? ["--appendfsync", "everysec"] : []));
    if (o.module !== undefined) args.push("--loadmodule", o.module, ...(o.moduleArgs ?? []));
    args.push(...(o.extraArgs ?? []));
    const out = openSync(this.logFile, "a");
    let child: ChildProcess;
    try {
      child = spawn(valkeyServerBinary(), args, { cwd: this.dir, stdio: ["ignore", out, out] });
    } finally {
      closeSync(out);
    }
    child.unref();
    this.child = child;
    this.exitNote = null;
    if (child.pid !== undefined) live.set(child.pid, { dir: this.dir, keepDir: o.keepDir ?? false });
    this.exited = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitNote = signal ? `killed by ${signal}` : `exited with code ${code}`;
        if (child.pid !== undefined) live.delete(child.pid);
        resolve();
      });
    });
    const spawnError = new Promise<never>((_, reject) => {
      child.once("error", (err) =>
        reject(
          new Error(
            `cannot start ${valkeyServerBinary()} (is it installed? run scripts/setup.sh): ${err.message}`,
          ),
        ),
      );
    });
    spawnError.catch(() => {});
    try {
      await Promise.race([this.waitFor("did not answer PING", () => this.answers()), spawnError]);
    } catch (err) {
      await this.halt();
      throw err;
    }
  }

  /** PING answers PONG and the dataset is loaded. */
  private async answers(): Promise<boolean> {
    const password = this.opts.password;
    const client = await RespClient.connect(this.port, {
      timeoutMs: 1000,
      ...(password ? { password } : {}),
    });
    try {
      const [pong, info] = await client.call([["PING"], ["INFO", "persistence"]]);
      return text(pong) === "PONG" && /^loading:0\r?$/m.test(text(info));
    } finally {
      await client.close();
    }
  }

  /**
   * Polls `check` until it resolves true, within the start timeout; fails at once, with the
   * log's tail, if the process exits.
   */
  async waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
    const timeoutMs = this.opts.startTimeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    let lastError = "";
    while (Date.now() < deadline) {
      if (this.exitNote !== null) throw this.failure("failed to start");
      try {
        if (await check()) return;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
      }
      await sleep(POLL_MS);
    }
    throw this.failure(`${what} within ${timeoutMs} ms${lastError ? `; last error: ${lastError}` : ""}`);
  }

  private failure(what: string): Error {
    const tail = this.logTail();
    if (this.exitNote !== null && /Address already in use/i.test(tail)) {
      return new AddressInUseError(`port ${this.port} is already in use`);
    }
    const how = this.exitNote === null ? "" : ` (valkey-server ${this.exitNote})`;
    return new Error(
      `valkey-server on ${this.host}:${this.port} ${what}${how}\n${tail || "(no log output)"}`,
    );
  }

  private running(): ChildProcess | null {
    const child = this.child;
    return child === null || child.exitCode !== null || child.signalCode !== null ? null : child;
  }

  private async exitedWithin(ms: number): Promise<boolean> {
    const timeout = new AbortController();
    const timer = sleep(ms, false, { signal: timeout.signal }).catch(() => false);
    const done = await Promise.race([this.exited.then(() => true), timer]);
    timeout.abort();
    return done;
  }

  /** SIGKILL at once — no shutdown, nothing saved or flushed — and wait for the exit; the dir stays. */
  async kill(): Promise<void> {
    const child = this.running();
    if (child === null) return;
    child.kill("SIGKILL");
    if (!(await this.exitedWithin(KILL_WAIT_MS))) {
      throw new Error(`valkey-server pid ${child.pid} did not exit after SIGKILL`);
    }
  }

  /** SIGTERM (SIGKILL after 10 s) and wait for the exit; the dir stays. */
  async halt(): Promise<void> {
    const child = this.running();
    if (child === null) return;
    child.kill("SIGTERM");
    if (!(await this.exitedWithin(STOP_GRACE_MS))) await this.kill();
  }

  /** Halts the server and removes its dir (unless `keepDir`). Idempotent. */
  async stop(): Promise<void> {
    await this.halt();
    if (this.removed || this.opts.keepDir) return;
    this.removed = true;
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Starts a throwaway valkey-server on a free 127.0.0.1 port in a new temp dir and resolves once
 * it answers PING with its dataset loaded. Rejects with the log's tail if it fails to start.
 */
export async function startEmbeddedValkey(opts: EmbeddedValkeyOptions = {}): Promise<EmbeddedValkey> {
  const dir = await mkdtemp(join(tmpdir(), "echomq-valkey-"));
  try {
    for (let attempt = 1; ; attempt++) {
      const server = new EmbeddedValkey(dir, await freePort(), opts);
      try {
        await server.launch();
        return server;
      } catch (err) {
        if (!(err instanceof AddressInUseError) || attempt >= START_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

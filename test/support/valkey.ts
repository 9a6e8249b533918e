/**
 * Throwaway valkey-server instances for tests.
 *
 * Each server listens on a free 127.0.0.1 port, lives in its own temp directory (config, log,
 * AOF, nodes.conf, aclfile) and is killed when the test process exits, however it exits.
 *
 *   const server = await startValkey({ aof: true });
 *   await server.cli("SET", "k", "v");
 *   await server.restart();          // same port, same dir: the AOF is reloaded
 *   await server.crash();            // SIGKILL, no shutdown: what a crash leaves on disk stays
 *   await server.restart();          // starts it again on the same port and dir
 *   await server.stop();             // kills it and removes the dir
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type RespArg, type RespReply, rawCommand } from "./resp.js";

export interface StartValkeyOptions {
  /** appendonly yes + appendfsync always. Default: no persistence at all (`save ""`, no AOF). */
  aof?: boolean;
  /** Path of a module (.so) to load with `loadmodule`. */
  module?: string;
  /** Arguments passed to the module after its path. */
  moduleArgs?: string[];
  /** ACL file lines, e.g. `user alice on >pw ~emq:{a}:* +@all`. The default user keeps full
   *  access (with `password` if given) unless a line defines `user default`. */
  acl?: string[];
  /** cluster-enabled yes; all 16384 slots are assigned to this node and cluster_state:ok awaited. */
  cluster?: boolean;
  /** Start as a replica; by default start waits until master_link_status:up. */
  replicaOf?: { host: string; port: number; password?: string; waitForSync?: boolean };
  /** Extra command-line arguments, e.g. ["--maxmemory", "10mb"]. */
  extraArgs?: string[];
  /** Password of the default user (requirepass). `cli` authenticates with it. */
  password?: string;
  /** Keep the temp dir after stop() (it is still removed at process exit). */
  keepDir?: boolean;
  /** Bound for the server to answer PING (and finish loading); default 10000 ms. */
  startTimeoutMs?: number;
}

export interface ValkeyServer {
  readonly host: string;
  readonly port: number;
  /** Pid of the current process (changes on restart). */
  readonly pid: number;
  readonly dir: string;
  /** redis://[:password@]127.0.0.1:port */
  readonly url: string;
  readonly logFile: string;
  /** Cluster bus port, when started with `cluster`. */
  readonly clusterPort: number | undefined;
  /** SIGTERM (SIGKILL after a bound), wait for exit, remove the dir (unless keepDir). Idempotent. */
  stop(): Promise<void>;
  /** Stop and start again on the same port and dir (AOF / nodes.conf are reloaded). */
  restart(): Promise<void>;
  /**
   * SIGKILL the process (no shutdown, no final AOF rewrite or save) and wait for it to exit;
   * the dir is kept. `restart()` starts it again on the same port and dir.
   */
  crash(): Promise<void>;
  /** Runs one command as the default user; a server error rejects. */
  cli(...args: RespArg[]): Promise<RespReply>;
  /** The last lines of the server log and its stdout/stderr. */
  logTail(lines?: number): string;
}

const HOST = "127.0.0.1";
const START_ATTEMPTS = 5;
const STOP_GRACE_MS = 5000;
const KILL_WAIT_MS = 5000;
const POLL_MS = 25;

/* ------------------------------------------------------------------ process-exit cleanup */

interface Live {
  child: ChildProcess;
  dir: string;
  keepDir: boolean;
}
const live = new Map<number, Live>();

function killAllNow(): void {
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

function onSignal(signal: NodeJS.Signals): void {
  killAllNow();
  // Re-raise with the default behaviour unless someone else handles this signal too.
  if (process.listenerCount(signal) === 1) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}

process.on("exit", killAllNow);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);

/* ------------------------------------------------------------------ helpers */

/** A port that was free on 127.0.0.1 a moment ago (bind port 0, read it, close). */
export function freePort(host = HOST): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("could not read the port of a listening socket"));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Quotes a value for valkey.conf. */
function q(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

class AddressInUseError extends Error {}

function tailOf(file: string, lines: number): string {
  if (!existsSync(file)) return "";
  const all = readFileSync(file, "utf8").trimEnd().split("\n");
  return all.slice(-lines).join("\n");
}

function aclLines(opts: StartValkeyOptions): string[] {
  const lines = [...(opts.acl ?? [])];
  if (!lines.some((line) => /^\s*user\s+default\s/.test(line))) {
    const auth = opts.password === undefined ? "nopass" : `>${opts.password}`;
    lines.unshift(`user default on ${auth} ~* &* +@all`);
  }
  return lines;
}

interface Layout {
  dir: string;
  port: number;
  clusterPort: number | undefined;
}

function configText(opts: StartValkeyOptions, layout: Layout): string {
  const { dir, port, clusterPort } = layout;
  const lines = [
    `bind ${HOST}`,
    `port ${port}`,
    `dir ${q(dir)}`,
    `logfile ${q(join(dir, "valkey.log"))}`,
    "daemonize no",
    'save ""',
    "enable-debug-command local",
    "enable-module-command local",
    "repl-diskless-sync-delay 0",
  ];
  if (opts.aof) lines.push("appendonly yes", "appendfsync always");
  else lines.push("appendonly no");
  if (opts.module !== undefined)
    lines.push(["loadmodule", q(opts.module), ...(opts.moduleArgs ?? []).map(q)].join(" "));
  if (opts.acl !== undefined) lines.push(`aclfile ${q(join(dir, "users.acl"))}`);
  else if (opts.password !== undefined) lines.push(`requirepass ${q(opts.password)}`);
  if (opts.cluster) {
    lines.push("cluster-enabled yes", "cluster-config-file nodes.conf", `cluster-port ${clusterPort}`);
  }
  if (opts.replicaOf) {
    lines.push(`replicaof ${opts.replicaOf.host} ${opts.replicaOf.port}`);
    if (opts.replicaOf.password !== undefined) lines.push(`masterauth ${q(opts.replicaOf.password)}`);
  }
  return `${lines.join("\n")}\n`;
}

function infoField(info: RespReply, field: string): string | undefined {
  const match = new RegExp(`^${field}:(.*)$`, "m").exec(String(info));
  return match?.[1]?.trim();
}

/* ------------------------------------------------------------------ the server */

class Server implements ValkeyServer {
  readonly host = HOST;
  readonly logFile: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private removed = false;

  constructor(
    private readonly opts: StartValkeyOptions,
    readonly dir: string,
    public port: number,
    readonly clusterPort: number | undefined,
  ) {
    this.logFile = join(dir, "valkey.log");
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get url(): string {
    const auth = this.opts.password === undefined ? "" : `:${encodeURIComponent(this.opts.password)}@`;
    return `redis://${auth}${this.host}:${this.port}`;
  }

  private get outFile(): string {
    return join(this.dir, "stdout.log");
  }

  private get startTimeoutMs(): number {
    return this.opts.startTimeoutMs ?? 10_000;
  }

  logTail(lines = 30): string {
    const log = tailOf(this.logFile, lines);
    const out = tailOf(this.outFile, lines);
    return [log && `--- ${this.logFile}\n${log}`, out && `--- stdout/stderr\n${out}`]
      .filter(Boolean)
      .join("\n");
  }

  cli(...args: RespArg[]): Promise<RespReply> {
    return rawCommand(this.port, args, { host: this.host, password: this.opts.password });
  }

  async writeFiles(): Promise<void> {
    const layout = { dir: this.dir, port: this.port, clusterPort: this.clusterPort };
    await writeFile(join(this.dir, "valkey.conf"), configText(this.opts, layout));
    if (this.opts.acl !== undefined)
      await writeFile(join(this.dir, "users.acl"), `${aclLines(this.opts).join("\n")}\n`);
  }

  /** Spawns the process and waits until it is ready; rejects (with the log tail) if it is not. */
  async launch(): Promise<void> {
    const child = this.spawnChild();
    let exitNote: string | null = null;
    this.exited = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        exitNote = signal ? `killed by ${signal}` : `exited with code ${code}`;
        if (child.pid !== undefined) live.delete(child.pid);
        resolve();
      });
    });
    const spawnError = new Promise<never>((_, reject) => {
      child.once("error", (err) => reject(new Error(`could not run valkey-server: ${err.message}`)));
    });
    spawnError.catch(() => {});
    try {
      await Promise.race([this.waitReady(() => exitNote), spawnError]);
      if (this.opts.cluster) await this.ensureClusterOk(() => exitNote);
      if (this.opts.replicaOf && this.opts.replicaOf.waitForSync !== false)
        await this.waitForSync(() => exitNote);
    } catch (err) {
      await this.halt();
      throw err;
    }
  }

  private spawnChild(): ChildProcess {
    const out = openSync(this.outFile, "a");
    try {
      const args = [join(this.dir, "valkey.conf"), ...(this.opts.extraArgs ?? [])];
      const child = spawn("valkey-server", args, { cwd: this.dir, stdio: ["ignore", out, out] });
      child.unref();
      this.child = child;
      if (child.pid !== undefined)
        live.set(child.pid, { child, dir: this.dir, keepDir: this.opts.keepDir ?? false });
      return child;
    } finally {
      closeSync(out);
    }
  }

  private failure(what: string, exitNote: string | null): Error {
    const tail = this.logTail();
    if (exitNote !== null && /Address already in use/i.test(tail)) {
      return new AddressInUseError(`port ${this.port} is already in use`);
    }
    const how = exitNote === null ? "" : ` (valkey-server ${exitNote})`;
    return new Error(
      `valkey-server on ${this.host}:${this.port} ${what}${how}\n${tail || "(no log output)"}`,
    );
  }

  /** Polls until `check` resolves true, failing fast if the process exits. */
  private async poll(
    what: string,
    exitNote: () => string | null,
    check: () => Promise<boolean>,
  ): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    let lastError = "";
    while (Date.now() < deadline) {
      if (exitNote() !== null) throw this.failure(`failed to start`, exitNote());
      try {
        if (await check()) return;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
      }
      await sleep(POLL_MS);
    }
    const last = lastError ? `; last error: ${lastError}` : "";
    throw this.failure(`${what} within ${this.startTimeoutMs} ms${last}`, exitNote());
  }

  private waitReady(exitNote: () => string | null): Promise<void> {
    return this.poll("did not answer PING", exitNote, async () => {
      const opts = { host: this.host, password: this.opts.password, timeoutMs: 1000 };
      if ((await rawCommand(this.port, ["PING"], opts)) !== "PONG") return false;
      const info = await rawCommand(this.port, ["INFO", "persistence"], opts);
      return infoField(info, "loading") === "0";
    });
  }

  private async ensureClusterOk(exitNote: () => string | null): Promise<void> {
    const info = await this.cli("CLUSTER", "INFO");
    if (infoField(info, "cluster_slots_assigned") === "0")
      await this.cli("CLUSTER", "ADDSLOTSRANGE", 0, 16383);
    await this.poll("did not reach cluster_state:ok", exitNote, async () => {
      return infoField(await this.cli("CLUSTER", "INFO"), "cluster_state") === "ok";
    });
  }

  private waitForSync(exitNote: () => string | null): Promise<void> {
    return this.poll("did not sync with its primary", exitNote, async () => {
      return infoField(await this.cli("INFO", "replication"), "master_link_status") === "up";
    });
  }

  /** Kills the process (SIGTERM, then SIGKILL) and waits for it to exit; keeps the dir. */
  private async halt(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    if (await this.exitedWithin(STOP_GRACE_MS)) return;
    child.kill("SIGKILL");
    if (!(await this.exitedWithin(KILL_WAIT_MS))) {
      throw new Error(`valkey-server pid ${child.pid} did not exit after SIGKILL`);
    }
  }

  private async exitedWithin(ms: number): Promise<boolean> {
    const timeout = new AbortController();
    const timer = sleep(ms, false, { signal: timeout.signal }).catch(() => false);
    const done = await Promise.race([this.exited.then(() => true), timer]);
    timeout.abort();
    return done;
  }

  async crash(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    if (!(await this.exitedWithin(KILL_WAIT_MS))) {
      throw new Error(`valkey-server pid ${child.pid} did not exit after SIGKILL`);
    }
  }

  async stop(): Promise<void> {
    await this.halt();
    if (this.removed || this.opts.keepDir) return;
    this.removed = true;
    await rm(this.dir, { recursive: true, force: true });
  }

  async restart(): Promise<void> {
    if (this.removed)
      throw new Error(
        `cannot restart valkey-server on port ${this.port}: it was stopped and its dir removed`,
      );
    await this.halt();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch();
        return;
      } catch (err) {
        if (!(err instanceof AddressInUseError) || attempt >= START_ATTEMPTS) throw err;
        await sleep(100 * attempt);
      }
    }
  }
}

/**
 * Starts a throwaway valkey-server on a free 127.0.0.1 port in a new temp dir and resolves
 * once it answers PING (and, per options, has cluster_state:ok / is synced with its primary).
 * Rejects with the log tail if it fails to start.
 */
export async function startValkey(opts: StartValkeyOptions = {}): Promise<ValkeyServer> {
  const dir = await mkdtemp(join(tmpdir(), "emq-valkey-"));
  try {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const clusterPort = opts.cluster ? await freePort() : undefined;
      const server = new Server(opts, dir, port, clusterPort);
      await server.writeFiles();
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

/**
 * Throwaway valkey-server instances for tests: the embedded server (`tools/embedded-valkey.ts`:
 * the process, its port, its dir and its cleanup) plus what tests need on top — ACL users, a
 * password, cluster mode, replicas, the debug and module commands, restart and crash. Servers
 * still running are also killed when the test process is interrupted (SIGINT, SIGTERM, SIGHUP).
 *
 *   const server = await startValkey({ aof: true });
 *   await server.cli("SET", "k", "v");
 *   await server.restart();          // same port, same dir: the AOF is reloaded
 *   await server.crash();            // SIGKILL, no shutdown: what a crash leaves on disk stays
 *   await server.restart();          // starts it again on the same port and dir
 *   await server.stop();             // kills it and removes the dir
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  AddressInUseError,
  type EmbeddedValkey,
  freePort,
  killAll,
  startEmbeddedValkey,
} from "../../tools/embedded-valkey.js";
import { type RespArg, type RespReply, rawCommand } from "./resp.js";

export { freePort } from "../../tools/embedded-valkey.js";

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
  /**
   * cluster-enabled yes; all 16384 slots are assigned to this node and cluster_state:ok awaited.
   * `"join"`: cluster-enabled yes with no slot assigned and nothing awaited (a node that
   * `test/support/cluster.ts` joins to others).
   */
  cluster?: boolean | "join";
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
  /** The last lines of the server's log. */
  logTail(lines?: number): string;
}

const START_ATTEMPTS = 5;

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  // Re-raise with the default behaviour unless someone else handles this signal too.
  if (process.listenerCount(signal) === 1) {
    process.removeListener(signal, onSignal);
    process.kill(process.pid, signal);
  }
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);

/** Quotes a value for valkey.conf. */
function q(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function aclLines(opts: StartValkeyOptions): string[] {
  const lines = [...(opts.acl ?? [])];
  if (!lines.some((line) => /^\s*user\s+default\s/.test(line))) {
    const auth = opts.password === undefined ? "nopass" : `>${opts.password}`;
    lines.unshift(`user default on ${auth} ~* &* +@all`);
  }
  return lines;
}

/** What tests add to the embedded server's defaults, as valkey.conf lines. */
function configLines(opts: StartValkeyOptions, dir: string, clusterPort: number | undefined): string[] {
  const lines = ["enable-debug-command local", "enable-module-command local", "repl-diskless-sync-delay 0"];
  if (opts.acl !== undefined) lines.push(`aclfile ${q(join(dir, "users.acl"))}`);
  else if (opts.password !== undefined) lines.push(`requirepass ${q(opts.password)}`);
  if (clusterPort !== undefined) {
    lines.push("cluster-enabled yes", "cluster-config-file nodes.conf", `cluster-port ${clusterPort}`);
  }
  if (opts.replicaOf) {
    lines.push(`replicaof ${opts.replicaOf.host} ${opts.replicaOf.port}`);
    if (opts.replicaOf.password !== undefined) lines.push(`masterauth ${q(opts.replicaOf.password)}`);
  }
  return lines;
}

function infoField(info: RespReply, field: string): string | undefined {
  const match = new RegExp(`^${field}:(.*)$`, "m").exec(String(info));
  return match?.[1]?.trim();
}

/* ------------------------------------------------------------------ the server */

class Server implements ValkeyServer {
  constructor(
    private readonly base: EmbeddedValkey,
    private readonly opts: StartValkeyOptions,
    readonly clusterPort: number | undefined,
  ) {}

  get host(): string {
    return this.base.host;
  }
  get port(): number {
    return this.base.port;
  }
  get pid(): number {
    return this.base.pid;
  }
  get dir(): string {
    return this.base.dir;
  }

  get url(): string {
    const auth = this.opts.password === undefined ? "" : `:${encodeURIComponent(this.opts.password)}@`;
    return `redis://${auth}${this.host}:${this.port}`;
  }

  logTail(lines = 30): string {
    return this.base.logTail(lines);
  }

  cli(...args: RespArg[]): Promise<RespReply> {
    return rawCommand(this.port, args, { host: this.host, password: this.opts.password });
  }

  /** After each start: cluster_state:ok for a cluster node, the sync for a replica. */
  async settle(): Promise<void> {
    if (this.opts.cluster === true) {
      const info = await this.cli("CLUSTER", "INFO");
      if (infoField(info, "cluster_slots_assigned") === "0")
        await this.cli("CLUSTER", "ADDSLOTSRANGE", 0, 16383);
      await this.base.waitFor("did not reach cluster_state:ok", async () => {
        return infoField(await this.cli("CLUSTER", "INFO"), "cluster_state") === "ok";
      });
    }
    if (this.opts.replicaOf && this.opts.replicaOf.waitForSync !== false) {
      await this.base.waitFor("did not sync with its primary", async () => {
        return infoField(await this.cli("INFO", "replication"), "master_link_status") === "up";
      });
    }
  }

  crash(): Promise<void> {
    return this.base.kill();
  }

  stop(): Promise<void> {
    return this.base.stop();
  }

  async restart(): Promise<void> {
    await this.base.halt();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.base.launch();
        break;
      } catch (err) {
        if (!(err instanceof AddressInUseError) || attempt >= START_ATTEMPTS) throw err;
        await sleep(100 * attempt);
      }
    }
    await this.settle();
  }
}

/**
 * Starts a throwaway valkey-server on a free 127.0.0.1 port in a new temp dir and resolves
 * once it answers PING (and, per options, has cluster_state:ok / is synced with its primary).
 * Rejects with the log tail if it fails to start.
 */
export async function startValkey(opts: StartValkeyOptions = {}): Promise<ValkeyServer> {
  let clusterPort: number | undefined;
  const base = await startEmbeddedValkey({
    ...(opts.module === undefined ? {} : { module: opts.module, moduleArgs: opts.moduleArgs ?? [] }),
    aof: opts.aof ?? false,
    // After the embedded server's `everysec`, so it wins (and a caller's own choice after it).
    extraArgs: [...(opts.aof ? ["--appendfsync", "always"] : []), ...(opts.extraArgs ?? [])],
    ...(opts.password === undefined ? {} : { password: opts.password }),
    keepDir: opts.keepDir ?? false,
    startTimeoutMs: opts.startTimeoutMs ?? 10_000,
    configFile: async (dir) => {
      // A new bus port on every attempt: the one before may be the port that was taken.
      if (opts.cluster) clusterPort = await freePort();
      const file = join(dir, "valkey.conf");
      await writeFile(file, `${configLines(opts, dir, clusterPort).join("\n")}\n`);
      if (opts.acl !== undefined) await writeFile(join(dir, "users.acl"), `${aclLines(opts).join("\n")}\n`);
      return file;
    },
  });
  const server = new Server(base, opts, clusterPort);
  try {
    await server.settle();
  } catch (err) {
    await base.stop();
    throw err;
  }
  return server;
}

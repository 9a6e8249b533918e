/**
 * The scratch server both sides share: one valkey-server with the module loaded and
 * `appendonly yes`, branded (the wire-6 brand) by `EMQ.INSTALL`. It reads keyspaces (SCAN MATCH under
 * each queue's hashtag, then every key by its type), watches the wake channels, and restarts on
 * its AOF for the durability checks. The stand also starts a plain one (`module: null`: no
 * module, no brand), the node its wire-4 connector brands.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { modulePath } from "../tools/module-path.js";
import { startValkey, type ValkeyServer } from "../test/support/valkey.js";
import { Keyspace } from "./dump.js";
import { ok, RespClient, Subscriber, text } from "./resp.js";
import { BRAND, STREAM_NODE_ENTRIES, VERSION_KEY } from "./verbs.js";

interface ScratchOptions {
  /** The module to load; default: the built module (ECHOMQ_MODULE overrides); null: a plain node. */
  module?: string | null;
}

/** appendfsync everysec: a graceful restart still finds every command in the AOF (flushed on exit). */
export const SCRATCH_AOF = { aof: true, extraArgs: ["--appendfsync", "everysec"] };

/**
 * The module's own timers are off on a scratch server (`echomq.timers no`): they would promote
 * and reap both sides' queues between the steps the harness compares. The harness holds the
 * verbs to the scripts; the timers are held to the verbs by `test/module.timers.test.ts`.
 */
export const SCRATCH_MODULE_ARGS = ["timers", "no"];

export class Scratch {
  runId = "";
  keys: Keyspace;

  private constructor(
    readonly server: ValkeyServer,
    public client: RespClient,
    public sub: Subscriber,
    readonly module: string | undefined,
  ) {
    this.keys = new Keyspace(client);
  }

  static async start(opts: ScratchOptions = {}): Promise<Scratch> {
    const module = opts.module === null ? undefined : (opts.module ?? modulePath());
    const server = await startValkey(
      module === undefined ? SCRATCH_AOF : { ...SCRATCH_AOF, module, moduleArgs: SCRATCH_MODULE_ARGS },
    );
    const scratch = await Scratch.attach(server, module);
    if (module !== undefined) await scratch.install();
    return scratch;
  }

  /**
   * A scratch node on a server already running (a cluster node): connected, its run_id read, its
   * streams cut into nodes of {@link STREAM_NODE_ENTRIES} entries.
   */
  static async attach(server: ValkeyServer, module: string | undefined): Promise<Scratch> {
    const client = await RespClient.connect(server.port);
    const scratch = new Scratch(server, client, await Subscriber.connect(server.port), module);
    await scratch.readRunId();
    await scratch.streamNodes();
    return scratch;
  }

  private async streamNodes(): Promise<void> {
    const nodes = ["stream-node-max-entries", STREAM_NODE_ENTRIES, "stream-node-max-bytes", 0];
    ok(await this.client.one("CONFIG", "SET", ...nodes), "CONFIG SET stream-node-*");
  }

  /** Brands the node (`EMQ.INSTALL`; on a cluster, the owner of the record's slot). */
  async install(): Promise<void> {
    const installed = ok(await this.client.one("EMQ.INSTALL", 1, VERSION_KEY), "EMQ.INSTALL");
    if (installed.t !== "int") throw new Error(`EMQ.INSTALL answered ${JSON.stringify(installed)}`);
    const brand = text(await this.client.one("GET", VERSION_KEY));
    if (brand !== BRAND) throw new Error(`the scratch server is not branded ${BRAND} (found ${brand})`);
  }

  private async readRunId(): Promise<void> {
    const info = text(ok(await this.client.one("INFO", "server"), "INFO server"));
    const match = /^run_id:(\S+)/m.exec(info);
    if (!match?.[1]) throw new Error("INFO server has no run_id");
    this.runId = match[1];
  }

  get port(): number {
    return this.server.port;
  }

  /** A replica of this server (module loaded), synced; stop it when done. `writable`: it takes
   * writes from clients (`replica-read-only no`). */
  startReplica(writable = false): Promise<ValkeyServer> {
    return startValkey({
      ...(this.module === undefined ? {} : { module: this.module, moduleArgs: SCRATCH_MODULE_ARGS }),
      replicaOf: { host: this.server.host, port: this.server.port },
      ...(writable ? { extraArgs: ["--replica-read-only", "no"] } : {}),
    });
  }

  /** The AOF files (appendonlydir), name → bytes. */
  aofFiles(): Map<string, Buffer> {
    const dir = join(this.server.dir, "appendonlydir");
    return new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]));
  }

  /** Stops and starts the server on its AOF; reconnects. */
  async restart(): Promise<void> {
    await this.client.close();
    await this.sub.close();
    await this.server.restart();
    this.client = await RespClient.connect(this.server.port);
    this.keys = new Keyspace(this.client);
    this.sub = await Subscriber.connect(this.server.port);
    await this.readRunId();
    await this.streamNodes();
  }

  async stop(): Promise<void> {
    await this.client.close();
    await this.sub.close();
    await this.server.stop();
  }
}

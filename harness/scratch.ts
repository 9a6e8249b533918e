/**
 * The scratch server both sides share: one valkey-server with the module loaded and
 * `appendonly yes`, branded `echomq:6.0.0` by `EMQ.INSTALL`. It reads keyspaces (SCAN MATCH under
 * each queue's hashtag, then every key by its type), watches the wake channels, and restarts on
 * its AOF for the durability checks.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { modulePath } from "../tools/module-path.js";
import { startValkey, type ValkeyServer } from "../test/support/valkey.js";
import type { RawDump, RawValue } from "./compare.js";
import { type Command, ok, type Reply, RespClient, Subscriber, text } from "./resp.js";
import { BRAND, VERSION_KEY } from "./verbs.js";

/** Escapes glob characters so a queue name matches itself in SCAN MATCH. */
export function escapeGlob(name: string): string {
  return name.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

export interface ScratchOptions {
  /** The module to load; default: the built module (ECHOMQ_MODULE overrides). */
  module?: string;
}

/** Reads keyspaces through one connection. */
export class Keyspace {
  constructor(readonly client: RespClient) {}

  /** Every key under each queue's hashtag (SCAN MATCH emq:{<q>}:*), plus `extra`, read type by type. */
  async dumpQueues(queues: readonly string[], extra: readonly Buffer[] = []): Promise<RawDump> {
    const keys = new Set<string>(extra.map((k) => k.toString("latin1")));
    for (const q of queues) for (const k of await this.scan(`emq:{${escapeGlob(q)}}:*`)) keys.add(k);
    return this.read([...keys].sort());
  }

  /** Every key of the server (the durability checks). */
  async dumpAll(): Promise<RawDump> {
    return this.read((await this.scan("*")).sort());
  }

  private async scan(pattern: string): Promise<string[]> {
    const out: string[] = [];
    let cursor = "0";
    do {
      const reply = ok(
        await this.client.one("SCAN", cursor, "MATCH", Buffer.from(pattern, "latin1"), "COUNT", 100000),
        "SCAN",
      );
      if (reply.t !== "array" || reply.v[1]?.t !== "array") throw new Error("SCAN: unexpected reply");
      cursor = text(reply.v[0]);
      for (const k of reply.v[1].v) out.push(text(k));
    } while (cursor !== "0");
    return out;
  }

  /** TYPE plus the read of each common type in one pipeline, then the rare types. */
  private async read(keys: readonly string[]): Promise<RawDump> {
    const dump: RawDump = new Map();
    if (keys.length === 0) return dump;
    const commands: Command[] = keys.flatMap((key) => {
      const k = Buffer.from(key, "latin1");
      return [
        ["TYPE", k],
        ["HGETALL", k],
        ["ZRANGE", k, 0, -1, "WITHSCORES"],
        ["GET", k],
      ];
    });
    const replies = await this.client.call(commands);
    const rare: { key: string; type: string }[] = [];
    keys.forEach((key, i) => {
      const [type, hash, zset, str] = replies.slice(i * 4, i * 4 + 4) as [Reply, Reply, Reply, Reply];
      const t = text(type);
      if (t === "none") return;
      if (t === "hash") dump.set(key, { type: "hash", fields: pairs(hash) });
      else if (t === "zset") {
        dump.set(key, {
          type: "zset",
          members: pairs(zset).map(([m, s]): [Buffer, string] => [m, s.toString("latin1")]),
        });
      } else if (t === "string") dump.set(key, { type: "string", value: bulk(str) });
      else rare.push({ key, type: t });
    });
    for (const { key, type } of rare) dump.set(key, await this.readRare(key, type));
    return dump;
  }

  private async readRare(key: string, type: string): Promise<RawValue> {
    const k = Buffer.from(key, "latin1");
    if (type === "list") return { type: "list", items: elements(await this.client.one("LRANGE", k, 0, -1)) };
    if (type === "set") {
      const members = elements(await this.client.one("SMEMBERS", k)).sort(Buffer.compare);
      return { type: "set", members };
    }
    return { type: "other", name: type };
  }
}

export class Scratch {
  runId = "";
  keys: Keyspace;

  private constructor(
    readonly server: ValkeyServer,
    public client: RespClient,
    public sub: Subscriber,
    readonly module: string,
  ) {
    this.keys = new Keyspace(client);
  }

  static async start(opts: ScratchOptions = {}): Promise<Scratch> {
    const module = opts.module ?? modulePath();
    // appendfsync everysec: a graceful restart still finds every command in the AOF (flushed on exit).
    const server = await startValkey({ aof: true, module, extraArgs: ["--appendfsync", "everysec"] });
    const client = await RespClient.connect(server.port);
    const scratch = new Scratch(server, client, await Subscriber.connect(server.port, "emq:*"), module);
    const installed = ok(await client.one("EMQ.INSTALL", 1, VERSION_KEY), "EMQ.INSTALL");
    if (installed.t !== "int") throw new Error(`EMQ.INSTALL answered ${JSON.stringify(installed)}`);
    const brand = text(await client.one("GET", VERSION_KEY));
    if (brand !== BRAND) throw new Error(`the scratch server is not branded ${BRAND} (found ${brand})`);
    await scratch.readRunId();
    return scratch;
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
      module: this.module,
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
    this.sub = await Subscriber.connect(this.server.port, "emq:*");
    await this.readRunId();
  }

  async stop(): Promise<void> {
    await this.client.close();
    await this.sub.close();
    await this.server.stop();
  }
}

function bulk(reply: Reply): Buffer {
  return reply.t === "bulk" ? reply.v : Buffer.alloc(0);
}

function elements(reply: Reply): Buffer[] {
  return reply.t === "array" ? reply.v.map(bulk) : [];
}

function pairs(reply: Reply): [Buffer, Buffer][] {
  const flat = elements(reply);
  const out: [Buffer, Buffer][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

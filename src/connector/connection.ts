/**
 * `connect()` opens a fenced connection on wire 4 (Lua scripts, the default) or wire 6 (the
 * native module). `eval()` sends a script's line; the wire decides what goes out.
 */
import type tls from "node:tls";
import { Command, Redis } from "iovalkey";
import {
  type Arg,
  type Engine,
  type EngineKind,
  engineFor,
  type Line,
  type ScriptCall,
  type Sender,
  type Wire,
} from "../engine/index.js";
import {
  AuthError,
  ConnectionClosedError,
  ConnectionError,
  ConnectionLostError,
  EchoMQError,
  InvalidArgumentError,
  ServerError,
  VersionFenceError,
} from "../errors.js";
import { JOB_CORE_VERBS, type Script } from "../scripts/index.js";
import { FencingConnector } from "./fencing-connector.js";

export type { Arg, ScriptCall, Wire } from "../engine/index.js";

export interface ConnectOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: tls.ConnectionOptions | boolean;
  /** 4 (Lua scripts, default) or 6 (the native module). */
  wire?: Wire;
  /** Client name set with CLIENT SETNAME on every socket. */
  name?: string;
  /** Bound for the first connect, and for each socket's boot + fence (ms). Default 5000. */
  connectTimeoutMs?: number;
  /** Verbs a wire-6 node must offer; default: every verb the host's scripts declare. */
  requiredVerbs?: readonly string[];
  /** The client's auto-pipelining (one batch in flight at a time). Default false: commands written in
   * the same tick already leave in one write, without waiting for the previous batch's replies. */
  autoPipelining?: boolean;
  /**
   * Commands written in one tick leave in batches of this many (one `writev` each), so the
   * server can start on a batch while the next is written. Default 16.
   */
  writeBatch?: number;
}

const URL_SCHEMES = new Set(["redis:", "rediss:", "valkey:", "valkeys:"]);

/**
 * Parses `redis://[user:pass@]host:port[/db]` (or `rediss://`, `valkey://`, `valkeys://` — the
 * `s` forms turn TLS on) into options. A string that is not such a URL throws
 * `InvalidArgumentError` naming what is wrong.
 */
export function optionsFromUrl(url: string): ConnectOptions {
  if (typeof url !== "string") throw new InvalidArgumentError("url", `must be a string, got ${typeof url}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidArgumentError("url", `is not a URL: ${JSON.stringify(url)}`);
  }
  if (!URL_SCHEMES.has(u.protocol)) {
    throw new InvalidArgumentError(
      "url",
      `scheme must be redis:, rediss:, valkey: or valkeys:, got ${u.protocol}`,
    );
  }
  const opts: ConnectOptions = { host: u.hostname || "127.0.0.1", port: Number(u.port || 6379) };
  if (u.username) opts.username = decodeURIComponent(u.username);
  if (u.password) opts.password = decodeURIComponent(u.password);
  const path = u.pathname.replace(/^\//, "");
  if (path.length > 0) {
    if (!/^\d{1,9}$/.test(path))
      throw new InvalidArgumentError("url", `database must be a number, got /${path}`);
    opts.db = Number(path);
  }
  if (u.protocol === "rediss:" || u.protocol === "valkeys:") opts.tls = true;
  return opts;
}

export class Connection implements Sender {
  /** The executor this connection runs transitions with (wire 4: scripts; wire 6: native). */
  readonly engine: Engine;
  /** The underlying client; for commands outside the job core. */
  readonly client: Redis;
  private readonly connector: FencingConnector;
  private closed = false;
  private readonly functions = new Map<string, (...args: Arg[]) => Promise<unknown>>();

  /** @internal use `connect()` */
  constructor(
    client: Redis,
    connector: FencingConnector,
    engine: (sender: Sender) => Engine,
    private readonly options: ConnectOptions,
  ) {
    this.client = client;
    this.connector = connector;
    this.engine = engine(this);
  }

  /** The wire this connection speaks: 4 (scripts) or 6 (the native module). */
  get wire(): Wire {
    return this.engine.wire;
  }

  /** A new connection to the same node with the same options (fenced like this one). */
  duplicate(overrides: Partial<ConnectOptions> = {}): Promise<Connection> {
    return connect({ ...this.options, ...overrides });
  }

  /**
   * The refusal that stopped this connection for good (fence, credentials, a boot command), if
   * one did: every call fails with it and nothing reconnects.
   */
  get fatal(): EchoMQError | undefined {
    return this.connector.fatal;
  }

  /** How many sockets have passed the fence so far (1 after the first connect; +1 per reconnect). */
  get fencedSockets(): number {
    return this.connector.fencedSockets;
  }

  /**
   * Runs a script as this connection's engine runs it: wire 4 `EVALSHA <sha> <numkeys> <keys…>
   * <args…>` (loading the source once on `NOSCRIPT`); wire 6 a script that declares a verb as
   * `EMQ.<VERB>` with the same tail, a `read` script as `EVALSHA`, any other refused locally.
   * Replies keep bulk strings as Buffers.
   */
  eval(script: Script, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.engine.eval(script, keys, args);
  }

  /** Runs many script calls in one round trip; each result is the call's reply or its error. */
  evalBatch(calls: readonly ScriptCall[]): Promise<unknown[]> {
    return this.engine.evalBatch(calls);
  }

  /**
   * Sends commands in the same tick, so they leave together (the connector coalesces one tick's
   * writes); each result is the reply or the typed error.
   */
  sendAll(commands: readonly Line[]): Promise<unknown[]> {
    return Promise.all(
      commands.map(([name, args]) =>
        this.commandFunction(name)(...args).catch((err: unknown) => this.translate(err)),
      ),
    );
  }

  /** Sends one command; replies keep bulk strings as Buffers. Errors are typed. */
  async send(command: string, args: readonly Arg[]): Promise<unknown> {
    try {
      return await this.commandFunction(command)(...args);
    } catch (err) {
      throw this.translate(err);
    }
  }

  /**
   * The client's Buffer-reply function for a command. Commands the client does not know
   * (`EMQ.*`) are added as built-ins first, so auto-pipelining batches them like any other.
   */
  private commandFunction(command: string): (...args: Arg[]) => Promise<unknown> {
    let fn = this.functions.get(command);
    if (!fn) {
      fn = this.lookupFunction(command);
      this.functions.set(command, fn);
    }
    return fn;
  }

  private lookupFunction(command: string): (...args: Arg[]) => Promise<unknown> {
    const name = command.toLowerCase();
    const table = this.client as unknown as Record<string, (...args: Arg[]) => Promise<unknown>>;
    const fn = table[`${name}Buffer`];
    if (typeof fn === "function") return fn.bind(this.client);
    // A command unknown to the client: send it outside any auto-pipeline.
    return (...args: Arg[]) =>
      this.client.sendCommand(new Command(command, args, { replyEncoding: null })) as Promise<unknown>;
  }

  /**
   * Subscribes this connection to the shard channel `channel` (`SSUBSCRIBE`; it then carries nothing
   * else); `onMessage` gets each
   * message. iovalkey subscribes again after every reconnect; `onResubscribed` runs then (a
   * message may have been missed meanwhile). A refusal (`NOPERM` …) is thrown typed.
   */
  async subscribe(
    channel: string,
    onMessage: (message: string) => void,
    onResubscribed: () => void = () => {},
  ): Promise<void> {
    this.client.on("smessage", (_channel: string, message: string) => onMessage(message));
    let first = true;
    this.client.on("ready", () => {
      if (!first) onResubscribed();
      first = false;
    });
    try {
      await this.client.ssubscribe(channel);
    } catch (err) {
      throw this.translate(err);
    }
  }

  /** Ends the connection: pending replies are awaited (QUIT), then the socket closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client.status === "ready") {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }

  private translate(err: unknown): Error {
    if (this.connector.fatal) return this.connector.fatal;
    if (err instanceof EchoMQError) return err;
    if (err instanceof Error) {
      if (err.name === "ReplyError") return new ServerError(err.message, err);
      if (err.name === "MaxRetriesPerRequestError") return new ConnectionLostError(err);
      if (this.closed || /Connection is closed/.test(err.message)) {
        return new ConnectionClosedError(err);
      }
      return new ConnectionLostError(err);
    }
    return new ConnectionError(String(err));
  }
}

/**
 * Opens a connection and waits until its first socket has passed the fence. Rejects with
 * `InvalidArgumentError` for a bad option (before any socket opens), `AuthError` when the server
 * refuses the credentials, `VersionFenceError` when the node's brand does not admit this wire, or
 * `ConnectionError` naming host and port when the server cannot be reached within
 * `connectTimeoutMs` (or refuses `db` / `name`).
 */
export async function connect(options: ConnectOptions = {}): Promise<Connection> {
  const { host, port, engine, timeoutMs, writeBatch } = checkConnectOptions(options);
  const connector = new FencingConnector(
    { host, port, tls: options.tls },
    { username: options.username, password: options.password, db: options.db, name: options.name },
    engine.fence,
    timeoutMs,
    writeBatch,
  );
  const client = new Redis({
    host,
    port,
    lazyConnect: true,
    Connector: class {
      constructor() {
        // biome-ignore lint/correctness/noConstructorReturn: iovalkey instantiates the Connector class itself
        return connector;
      }
    } as never,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false,
    enableOfflineQueue: true,
    enableAutoPipelining: options.autoPipelining ?? false,
    retryStrategy: (attempt: number) =>
      connector.fatal ? null : Math.min(50 * 2 ** Math.min(attempt, 6), 2000),
  });
  client.on("error", () => {}); // errors reach callers through their commands
  // Register the module's commands before any pipeline exists: an auto-pipeline copies the
  // client's built-ins when it is created, so a command added later would be missing from it.
  for (const verb of [...JOB_CORE_VERBS, "VERSION", "INSTALL"])
    client.addBuiltinCommand(`emq.${verb.toLowerCase()}`);
  const connection = new Connection(client, connector, (sender) => engine.create(sender), options);
  try {
    await withTimeout(client.connect(), timeoutMs, () => lastError(connector));
  } catch (err) {
    client.disconnect();
    if (connector.fatal) throw connector.fatal;
    if (err instanceof VersionFenceError || err instanceof AuthError) throw err;
    throw new ConnectionError(
      `cannot reach valkey at ${host}:${port} within ${timeoutMs} ms: ${describeCause(lastError(connector) ?? err)}`,
      lastError(connector) ?? err,
    );
  }
  return connection;
}

/** The longest timer Node.js runs (ms); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidArgumentError(name, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return v;
}

/** Every connect option checked before a socket opens (typed errors naming the option). */
export function checkConnectOptions(options: ConnectOptions): {
  host: string;
  port: number;
  engine: EngineKind;
  timeoutMs: number;
  writeBatch: number;
} {
  if (typeof options !== "object" || options === null) {
    throw new InvalidArgumentError(
      "options",
      `must be an object, got ${options === null ? "null" : typeof options}`,
    );
  }
  const host = options.host ?? "127.0.0.1";
  if (typeof host !== "string" || host.length === 0) {
    throw new InvalidArgumentError("host", `must be a non-empty string, got ${String(options.host)}`);
  }
  const engine = engineFor(options.wire ?? 4, options.requiredVerbs);
  if (options.db !== undefined) integerOption("db", options.db, 0, 0, 2 ** 31 - 1);
  for (const name of ["username", "password", "name"] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== "string") {
      throw new InvalidArgumentError(name, `must be a string, got ${typeof value}`);
    }
  }
  return {
    host,
    port: integerOption("port", options.port, 6379, 1, 65535),
    engine,
    timeoutMs: integerOption("connectTimeoutMs", options.connectTimeoutMs, 5000, 1, MAX_TIMER_MS),
    writeBatch: integerOption("writeBatch", options.writeBatch, 16, 1, 1_000_000),
  };
}

function lastError(connector: FencingConnector): Error | undefined {
  return connector.fatal ?? connector.firstError;
}

function describeCause(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}

function withTimeout<T>(promise: Promise<T>, ms: number, cause: () => unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(cause() ?? new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/**
 * What `connect()` takes, checked before any socket opens (typed errors naming the option), and
 * the URL form of it.
 */
import type * as tls from "node:tls";
import { type EngineKind, engineFor, type Wire } from "../engine/index.js";
import { InvalidArgumentError } from "../errors.js";
import { FIXED_KEYSPACE, checkKeys, type KeyType, type OptionTable } from "../option-keys.js";

/** `connect()`'s options after their checks. `nodes` is null for a single node. */
export interface CheckedOptions {
  host: string;
  port: number;
  nodes: ClusterNode[] | null;
  engine: EngineKind;
  timeoutMs: number;
  writeBatch: number;
  waitForServerMs: number;
}

/** A node of a cluster, as `connect({ nodes })` takes it. */
export interface ClusterNode {
  host: string;
  port: number;
}

/** ioredis' connection options, as BullMQ's `connection` takes them (the ones EchoMQ honours). */
export interface ConnectionObject {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: tls.ConnectionOptions | boolean;
  /** `CLIENT SETNAME` (EchoMQ's `name`). */
  connectionName?: string;
  /** ms (EchoMQ's `connectTimeoutMs`). */
  connectTimeout?: number;
}

/**
 * An ioredis / iovalkey client, as far as EchoMQ reads it: a `Redis` (its `options`) or a
 * `Cluster` (`isCluster`, its startup nodes and `options.redisOptions`). Its sockets are never
 * used (src/connector/forms.ts).
 */
export interface ClientLike {
  options: object;
  status: string;
  isCluster?: boolean;
}

/** Where a connection goes, as BullMQ's `connection` takes it. */
export type ConnectionForm = string | ConnectionObject | ClientLike;

export interface ConnectOptions {
  /**
   * `redis://[user:pass@]host:port[/db]` (or `rediss://`, `valkey://`, `valkeys://`: TLS on),
   * instead of `host`/`port`/`username`/`password`/`db`/`tls`. `connect(url)` is the same.
   */
  url?: string;
  /**
   * Where to connect as BullMQ takes it, instead of `host`/`port`/`nodes`/credentials: a URL,
   * ioredis' option names (`{ host, port, username, password, db, tls, connectionName,
   * connectTimeout }`), or an existing ioredis / iovalkey client (`Redis` or `Cluster`) whose
   * options are carried over — its sockets are never used: EchoMQ's own are fenced. A client
   * whose options cannot be carried over (a Unix socket, Sentinel, a key prefix, a connector of
   * its own) is refused, saying what to pass.
   */
  connection?: ConnectionForm;
  host?: string;
  port?: number;
  /**
   * A Valkey Cluster: the nodes to start from (one reachable node is enough; the client reads the
   * rest from `CLUSTER SLOTS`). Instead of `host`/`port`. Every node socket is fenced by its role
   * (docs/cluster.md), the cluster's intent record (the brand key) is checked once, and every
   * command goes to the primary that owns its slot. A node may be given as `"host:port"` or a
   * URL (its credentials then stand for every node: give them alike, or once beside `nodes`).
   */
  nodes?: readonly (ClusterNode | string)[];
  /**
   * On a cluster: the address to dial for a node address the cluster announces (`"host:port"`),
   * when the two differ (NAT, containers, a proxy). Nodes not listed are dialled as announced.
   */
  natMap?: Readonly<Record<string, ClusterNode>>;
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
  /**
   * For a service that may start before its Valkey: while the server cannot be reached (refused,
   * reset, no answer within `connectTimeoutMs`), `connect()` tries again — after 100 ms, doubling
   * to at most 2,000 ms between tries — until this many ms have passed since it began, then
   * rejects with `ServerUnreachableError` (its `tries`). A refusal no retry fixes (fence,
   * credentials, not Valkey) rejects at once. Default 0: one try. At most 2^31−1.
   */
  waitForServerMs?: number;
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

/** The longest timer Node.js runs (ms); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw new InvalidArgumentError(name, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return v;
}

const CONNECT_OPTIONS: OptionTable = {
  of: "connect",
  keys: {
    url: "string",
    connection: ["string", "object"],
    host: "string",
    port: "number",
    nodes: "array",
    natMap: "object",
    username: "string",
    password: "string",
    db: "number",
    tls: ["boolean", "object"],
    wire: "number",
    name: "string",
    connectTimeoutMs: "number",
    requiredVerbs: "array",
    autoPipelining: "boolean",
    writeBatch: "number",
    waitForServerMs: "number",
  } satisfies Record<keyof ConnectOptions, KeyType>,
  source: "ioredis",
  foreign: {
    connectTimeout: "connectTimeoutMs",
    connectionName: "name",
    enableAutoPipelining: "autoPipelining",
    keyPrefix: FIXED_KEYSPACE,
  },
};

/** Every connect option checked before a socket opens (typed errors naming the option). */
export function checkConnectOptions(options: ConnectOptions): CheckedOptions {
  if (options === undefined) throw new InvalidArgumentError("options", "must be an object, got undefined");
  checkKeys(options, CONNECT_OPTIONS);
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
    nodes: checkNodes(options),
    engine,
    timeoutMs: integerOption("connectTimeoutMs", options.connectTimeoutMs, 5000, 1, MAX_TIMER_MS),
    writeBatch: integerOption("writeBatch", options.writeBatch, 16, 1, 1_000_000),
    waitForServerMs: integerOption("waitForServerMs", options.waitForServerMs, 0, 0, MAX_TIMER_MS),
  };
}

function checkNode(name: string, node: unknown): ClusterNode {
  const n = node as Partial<ClusterNode> | null;
  if (typeof n !== "object" || n === null || typeof n.host !== "string" || n.host.length === 0) {
    throw new InvalidArgumentError(name, "must be { host: string, port: number }");
  }
  return { host: n.host, port: integerOption(`${name}.port`, n.port, 6379, 1, 65535) };
}

/** `nodes` (and what goes with it) checked: null for a single node. */
function checkNodes(options: ConnectOptions): ClusterNode[] | null {
  if (options.natMap !== undefined) {
    if (typeof options.natMap !== "object" || options.natMap === null) {
      throw new InvalidArgumentError("natMap", 'must be an object of "host:port" → { host, port }');
    }
    for (const [from, to] of Object.entries(options.natMap)) checkNode(`natMap[${JSON.stringify(from)}]`, to);
  }
  if (options.nodes === undefined) return null;
  if (!Array.isArray(options.nodes) || options.nodes.length === 0) {
    throw new InvalidArgumentError("nodes", "must be a non-empty array of { host, port }");
  }
  if (options.host !== undefined || options.port !== undefined) {
    throw new InvalidArgumentError(
      "nodes",
      "give either nodes (a cluster) or host and port (one node), not both",
    );
  }
  if (options.db !== undefined && options.db !== 0) {
    throw new InvalidArgumentError("db", `a cluster has only database 0, got ${String(options.db)}`);
  }
  return options.nodes.map((node, i) => checkNode(`nodes[${i}]`, node));
}

function describeCause(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}

/** What went wrong, in words: refused, reset, or no answer within the bound (ms). */
export function unreachable(cause: unknown, timedOutAfter: number | undefined): string {
  const text = describeCause(cause);
  if (timedOutAfter !== undefined)
    return `no fenced connection within connectTimeoutMs (${timedOutAfter} ms; last: ${text})`;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED") return `connection refused (${text})`;
  if (code === "ECONNRESET" || code === "EPIPE") return `connection reset (${text})`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `host not found (${text})`;
  return text;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, cause: () => unknown): Promise<T> {
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

/** The address to dial for a node address a cluster announces (`host:port`), through `natMap`. */
export function dialOf(announced: string, natMap: ConnectOptions["natMap"]): ClusterNode {
  const mapped = natMap?.[announced];
  if (mapped) return { host: mapped.host, port: mapped.port };
  const at = announced.lastIndexOf(":");
  return { host: announced.slice(0, at), port: Number(announced.slice(at + 1)) };
}

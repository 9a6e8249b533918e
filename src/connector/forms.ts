/**
 * The forms `connect()` takes besides its own options, turned into them before any check: a URL
 * (`connect("redis://…")`, `{ url }`), BullMQ's `{ connection }` — a URL, ioredis' option names
 * (`host`, `port`, `username`, `password`, `db`, `tls`, `connectionName`, `connectTimeout`), or
 * an existing ioredis / iovalkey client — and cluster nodes as URLs or `host:port`.
 *
 * An existing client's sockets are never used: a socket that reconnects on its own would carry
 * commands without passing the fence (docs/architecture.md). Its options are read instead and
 * EchoMQ opens fenced sockets of its own to the same server with the same credentials; a client
 * whose options cannot be carried over (a Unix socket, Sentinel, a key prefix, its own
 * connector) is refused with `InvalidArgumentError` saying why and what to pass. Pure.
 */
import { InvalidArgumentError } from "../errors.js";
import { FIXED_KEYSPACE, checkKeys, type OptionTable } from "../option-keys.js";
import {
  type CheckedOptions,
  type ClientLike,
  type ClusterNode,
  type ConnectionObject,
  type ConnectOptions,
  checkConnectOptions,
  optionsFromUrl,
} from "./options.js";

/** A cluster node: `{ host, port }`, `"host:port"`, or a `redis://` URL. */
type NodeForm = ClusterNode | string;

const CONNECTION_OBJECT: OptionTable = {
  of: "connection",
  keys: {
    host: "string",
    port: "number",
    username: "string",
    password: "string",
    db: "number",
    tls: ["boolean", "object"],
    connectionName: "string",
    connectTimeout: "number",
  },
  source: "ioredis",
  foreign: {
    maxRetriesPerRequest:
      "EchoMQ's connection reconnects by itself and its workers retry what a drop interrupted: leave it out",
    enableReadyCheck: "EchoMQ waits for each socket's fence before use: leave it out",
    enableOfflineQueue:
      "commands wait for the reconnect (connect's waitForServerMs bounds the first): leave it out",
    lazyConnect: "connect() opens at once and resolves when fenced: leave it out",
    keyPrefix: FIXED_KEYSPACE,
    path: "Unix sockets are not supported: pass host and port",
    sentinels: "Sentinel is not supported: pass the primary's host and port",
    url: "pass the URL itself as connection",
  },
};

/** ioredis' defaults for the options EchoMQ cannot carry over from a client (others refused). */
const CLIENT_REFUSALS: readonly [string, (v: unknown) => boolean, string][] = [
  [
    "path",
    (v) => v != null && v !== "",
    "it connects over a Unix socket: pass { host, port } of a TCP listener",
  ],
  [
    "sentinels",
    (v) => Array.isArray(v) && v.length > 0,
    "it goes through Sentinel, which EchoMQ does not follow: pass the primary's { host, port }",
  ],
  ["keyPrefix", (v) => v != null && v !== "", `it has a keyPrefix: ${FIXED_KEYSPACE}`],
  [
    "Connector",
    (v) => v != null,
    "it has a connector of its own: EchoMQ's sockets are its own fenced ones; pass { host, port }",
  ],
];

function isClient(value: unknown): value is ClientLike {
  const v = value as Partial<ClientLike> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.options === "object" &&
    v.options !== null &&
    typeof (v as { status?: unknown }).status === "string"
  );
}

/** The options an ioredis client was made with, as EchoMQ's (its sockets are not used). */
function fromClient(client: ClientLike): ConnectOptions {
  if (client.isCluster) {
    const c = client as ClientLike & {
      startupNodes?: unknown[];
      options: { redisOptions?: Record<string, unknown>; natMap?: unknown };
    };
    if (typeof c.options.natMap === "function") {
      throw new InvalidArgumentError(
        "connection",
        "the cluster client's natMap is a function: pass natMap as an object",
      );
    }
    const redis = fromRedisOptions(c.options.redisOptions ?? {}, "the cluster client's redisOptions");
    const { host: _h, port: _p, db, ...rest } = redis;
    if (db !== undefined && db !== 0) {
      throw new InvalidArgumentError("db", `a cluster has only database 0, got ${String(db)}`);
    }
    const nodes = (c.startupNodes ?? []).map((n, i) => startupNode(n, i));
    return {
      ...rest,
      nodes,
      ...(c.options.natMap ? { natMap: c.options.natMap as ConnectOptions["natMap"] } : {}),
    };
  }
  return fromRedisOptions(client.options as Record<string, unknown>, "the client");
}

function startupNode(node: unknown, i: number): ClusterNode {
  if (typeof node === "number") return { host: "127.0.0.1", port: node };
  if (typeof node === "string") return nodeOf(node, `the cluster client's startup node ${i}`);
  const n = node as { host?: string; port?: number };
  return { host: n.host ?? "127.0.0.1", port: n.port ?? 6379 };
}

/** A client's `options` (ioredis' resolved `RedisOptions`) as EchoMQ's. */
function fromRedisOptions(o: Record<string, unknown>, what: string): ConnectOptions {
  for (const [key, refused, why] of CLIENT_REFUSALS) {
    if (refused(o[key])) {
      throw new InvalidArgumentError(
        "connection",
        `${what} cannot be carried over (its sockets are never used: EchoMQ opens fenced ones with its options): ${why}`,
      );
    }
  }
  const out: ConnectOptions = {};
  if (typeof o.host === "string") out.host = o.host;
  if (typeof o.port === "number") out.port = o.port;
  if (typeof o.username === "string" && o.username !== "") out.username = o.username;
  if (typeof o.password === "string" && o.password !== "") out.password = o.password;
  if (typeof o.db === "number" && o.db !== 0) out.db = o.db;
  if (o.tls) out.tls = o.tls as ConnectOptions["tls"];
  if (typeof o.connectionName === "string" && o.connectionName !== "") out.name = o.connectionName;
  if (typeof o.connectTimeout === "number") out.connectTimeoutMs = o.connectTimeout;
  return out;
}

/** BullMQ's `connection` as EchoMQ's options. */
function fromConnection(connection: unknown): ConnectOptions {
  if (typeof connection === "string") return optionsFromUrl(connection);
  if (isClient(connection)) return fromClient(connection);
  const o = checkKeys(connection, CONNECTION_OBJECT, "connection", "connection.") as ConnectionObject;
  const { connectionName, connectTimeout, ...same } = o;
  return {
    ...same,
    ...(connectionName !== undefined ? { name: connectionName } : {}),
    ...(connectTimeout !== undefined ? { connectTimeoutMs: connectTimeout } : {}),
  };
}

/** A cluster node given as `"host:port"` or a URL; its credentials, if any, beside it. */
function nodeOf(text: string, name: string): ClusterNode & { url?: ConnectOptions } {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const url = optionsFromUrl(text);
    if (url.db !== undefined && url.db !== 0) {
      throw new InvalidArgumentError("db", `a cluster has only database 0, got ${url.db} in ${name}`);
    }
    return { host: url.host!, port: url.port!, url };
  }
  const m = /^(.+):(\d{1,5})$/.exec(text);
  if (!m)
    throw new InvalidArgumentError(
      name,
      `must be "host:port" or a redis:// URL, got ${JSON.stringify(text)}`,
    );
  return { host: m[1]!, port: Number(m[2]) };
}

const CREDENTIALS = ["username", "password", "tls"] as const;

/** `nodes` with URL or `host:port` entries as `{ host, port }`; a URL's credentials, all alike, on top. */
function fromNodes(options: ConnectOptions): ConnectOptions {
  if (!Array.isArray(options.nodes) || !options.nodes.some((n) => typeof n === "string")) return options;
  const nodes = (options.nodes as readonly NodeForm[]).map((n, i) =>
    typeof n === "string" ? nodeOf(n, `nodes[${i}]`) : n,
  );
  const out: ConnectOptions = { ...options, nodes: nodes.map((n) => ({ host: n.host, port: n.port })) };
  const urls: ConnectOptions[] = nodes.flatMap((n) => ("url" in n && n.url ? [n.url] : []));
  for (const key of CREDENTIALS) {
    const given = [...new Set(urls.map((u) => u[key]).filter((v) => v !== undefined))];
    if (given.length === 0) continue;
    if (given.length > 1 || (options[key] !== undefined && options[key] !== given[0])) {
      throw new InvalidArgumentError(
        key,
        "the node URLs (and the options) give it differently: give it once",
      );
    }
    (out as Record<string, unknown>)[key] = given[0];
  }
  return out;
}

/** Keys that say where to connect: `url` and `connection` each replace all of them. */
const WHERE = ["host", "port", "nodes", "username", "password", "db", "tls"] as const;

/**
 * `connect()`'s argument as its own options: a URL string, `url`, `connection` (a URL, ioredis'
 * option names, an ioredis / iovalkey client) and `nodes` with URL or `host:port` entries become
 * `host`/`port`/`nodes`/credentials. Giving one of those forms beside the options it replaces is
 * an `InvalidArgumentError` naming both — but `tls` beside a URL: its TLS options (a CA, a
 * server name) for the URL's server, TLS on whatever the scheme.
 */
export function resolveConnectForms(input: string | ConnectOptions | undefined): ConnectOptions {
  if (typeof input === "string") return optionsFromUrl(input);
  if (typeof input !== "object" || input === null) return input as unknown as ConnectOptions;
  const { url, connection, ...rest } = input;
  if (url !== undefined && connection !== undefined) {
    throw new InvalidArgumentError("url", "give url or connection, not both");
  }
  let out: ConnectOptions = rest;
  if (url !== undefined) {
    out = { ...rest, ...optionsFromUrl(url), ...(rest.tls !== undefined ? { tls: rest.tls } : {}) };
    refuseBeside("url", rest, ["tls"]);
  } else if (connection !== undefined) {
    refuseBeside("connection", rest, []);
    out = { ...rest, ...fromConnection(connection) };
  }
  return fromNodes(out);
}

function refuseBeside(form: string, rest: ConnectOptions, allowed: readonly string[]): void {
  const clash = WHERE.filter((k) => rest[k] !== undefined && !allowed.includes(k));
  if (clash.length > 0) {
    throw new InvalidArgumentError(
      form,
      `it says where to connect: give it or ${clash.join(", ")}, not both`,
    );
  }
}

/** `resolveConnectForms`, then every check: the options as given in the end, and checked. */
export function checkConnectForms(input: string | ConnectOptions | undefined): {
  options: ConnectOptions;
  checked: CheckedOptions;
} {
  const options = resolveConnectForms(input);
  return { options, checked: checkConnectOptions(options) };
}

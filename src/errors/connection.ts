/**
 * The connection and the node behind it: the version fence, credentials, a server that cannot be
 * reached or is not Valkey, a connection lost, closed, or silent past its bound.
 */

import { EchoMQError } from "./base.js";

/**
 * The node's brand (the brand key of `protocol/protocol.json`) does not admit this connector. Fatal: the connector stops for
 * good and every pending call fails with this error. `got` is the value found (`"absent"` when
 * the key does not exist). On a cluster, `node` names the node (`host:port`) that refused: the
 * one whose role is wrong, or the one holding the cluster's intent record.
 */
export class VersionFenceError extends EchoMQError {
  readonly got: string;
  readonly expected: string;
  readonly detail: string | undefined;
  readonly node: string | undefined;
  constructor(expected: string, got: string, detail?: string, node?: string) {
    super(
      "EMQ_VERSION_FENCE",
      node === undefined
        ? `version fence: this connector needs a node branded ${expected}, found ${got}` +
            (detail ? ` (${detail})` : "") +
            ". A node serves one role: connect with the matching wire, or use another node."
        : `version fence at ${node}: this connector needs ${expected}, found ${got}` +
            (detail ? ` (${detail})` : "") +
            ". Every node of a cluster serves one role: load the echomq module on every node (wire 6) or on none (wire 4), and connect with the matching wire.",
    );
    this.expected = expected;
    this.got = got;
    this.detail = detail;
    this.node = node;
  }

  /** The same refusal, naming the node it happened at. */
  at(node: string): VersionFenceError {
    return new VersionFenceError(this.expected, this.got, this.detail, node);
  }
}

/**
 * The server refused the credentials (`WRONGPASS`, `NOAUTH`, an AUTH error). Fatal like a fence
 * refusal: the connection stops and every pending call fails with it. Check `username` /
 * `password` (or the URL's `user:password@`) against the server's ACL.
 */
export class AuthError extends EchoMQError {
  readonly reply: string;
  readonly host: string;
  readonly port: number;
  constructor(host: string, port: number, reply: string) {
    super(
      "EMQ_AUTH",
      `${AuthError.refused(host, port, reply)}: check connect()'s username and password options (or the URL's user:password@) against the server's ACL`,
    );
    this.reply = reply;
    this.host = host;
    this.port = port;
  }

  /** `valkey at host:port refused the credentials (<reply without its final period>)`. */
  static refused(host: string, port: number, reply: string): string {
    return `valkey at ${host}:${port} refused the credentials (${reply.replace(/\.+$/, "")})`;
  }
}

/** The server could not be reached (refused, timed out, or the connector was closed). */
export class ConnectionError extends EchoMQError {
  constructor(message: string, cause?: unknown) {
    super("EMQ_CONNECTION", message, { cause });
  }
}

/** The connection was closed (by `close()`): nothing more can be sent on it. */
export class ConnectionClosedError extends ConnectionError {
  override readonly code: string = "EMQ_CONNECTION_CLOSED";
  constructor(cause?: unknown) {
    super("the connection is closed: open a new one with connect()", cause);
  }
}

/**
 * The connection could not carry a command. Retryable (`retryable`); `sent` says whether the
 * command may have been written:
 * * `sent: true` — it was sent and the connection dropped before its reply: it may or may not
 *   have run on the server, and it was not re-sent. Check the job's state before acting again;
 *   an add retried with the same `id` or `key` is exact (a duplicate writes nothing).
 * * `sent: false` — the server was unreachable (the connection was down and reconnecting, or
 *   the reconnect failed before the command went out): it was never sent, nothing was written,
 *   and it is safe to send again.
 */
export class ConnectionLostError extends EchoMQError {
  readonly sent: boolean;
  readonly retryable = true;
  constructor(cause?: unknown, sent = true, down?: string) {
    super(
      "EMQ_CONNECTION_LOST",
      sent
        ? "connection lost, outcome unknown: the command was sent and the connection dropped before its reply (it may have been written); it was not re-sent. Check before acting again: an add retried with the same id or key is exact"
        : `connection down, nothing written: ${down ?? "the server could not be reached"}, so the command was not sent. Send it again once the server is back`,
      { cause },
    );
    this.sent = sent;
  }
}

/**
 * The endpoint answered, but not in RESP: it is not a Valkey server (an HTTP server, a TLS port
 * dialled without `tls`, another service). Fatal like a fence refusal: no reconnect can fix it.
 * `sent` is the start of what it sent (printable ASCII, at most 60 characters).
 */
export class NotValkeyError extends ConnectionError {
  override readonly code: string = "EMQ_NOT_VALKEY";
  readonly address: string;
  readonly sent: string;
  constructor(address: string, sent: string, cause?: unknown) {
    super(
      `the server at ${address} did not answer as Valkey (it sent ${JSON.stringify(sent)}): check the host and port (and tls)`,
      cause,
    );
    this.address = address;
    this.sent = sent;
  }
}

/**
 * `connect()` found no server it could reach: refused, reset, or no answer within
 * `connectTimeoutMs`, on every try (`tries`; more than one with `waitForServerMs`). The message
 * says what happened, where, and how long it took. Start the server, check host and port, or
 * pass `waitForServerMs` to wait for a server that is still starting.
 */
export class ServerUnreachableError extends ConnectionError {
  override readonly code: string = "EMQ_UNREACHABLE";
  /** `host:port` (on a cluster: the seeds, comma-separated). */
  readonly address: string;
  readonly cluster: boolean;
  /** What happened on the last try: refused, reset, no answer within `connectTimeoutMs`, … */
  readonly reason: string;
  readonly tries: number;
  readonly elapsedMs: number;
  constructor(
    address: string,
    what: string,
    tries: number,
    elapsedMs: number,
    cause?: unknown,
    cluster = false,
  ) {
    super(
      `cannot reach ${cluster ? "the valkey cluster" : "valkey"} at ${address}: ${what}; ${tries === 1 ? "tried once" : `tried ${tries} times`} in ${elapsedMs} ms. ` +
        "Is the server running there? connect({ waitForServerMs }) waits for one that is still starting",
      cause,
    );
    this.cluster = cluster;
    this.address = address;
    this.reason = what;
    this.tries = tries;
    this.elapsedMs = elapsedMs;
  }
}

/** A read that outlived its bound: the connection is taken as lost. */
export class WatchdogError extends EchoMQError {
  constructor(what: string, ms: number) {
    super("EMQ_WATCHDOG", `${what} got no reply within ${ms} ms: the reader reconnects`);
  }
}

/**
 * What every EchoMQ listener (the dashboard, the metrics server) checks before it answers:
 *
 * * **Where it listens.** Loopback by default; any other interface only with a token, or with
 *   `insecureNoToken` (`--insecure-no-token`) said explicitly.
 * * **The `Host` a request names** (every route): `localhost`, a loopback address, the address
 *   the request came in on, or a name in `allowedHosts` — never another name, which is what a
 *   DNS-rebinding page sends (its own name, resolved to this machine).
 * * **Where an action comes from** (every `POST`): an `Origin` (else a `Referer`) naming another
 *   site is refused, so a page elsewhere cannot drive the dashboard with a form or a script.
 * * **What an action carries**: `application/json` only — no form, no `text/plain`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { InvalidArgumentError } from "../errors.js";
import { HttpError } from "./http.js";

/** Where and how a listener listens: the options the dashboard and the metrics server share. */
export interface ListenOptions {
  /** TCP port; 0 picks a free one. Default: the listener's own (dashboard 3000, metrics 9464). */
  port?: number;
  /**
   * Interface to listen on. Default `127.0.0.1` (loopback only); any other needs `token` (or
   * `insecureNoToken`).
   */
  host?: string;
  /** Require this token on every request (`Authorization: Bearer <token>`; the dashboard also takes `?token=`). */
  token?: string;
  /**
   * Listen beyond loopback without a token: anyone who reaches the port may use it. Default
   * false (such a `host` is refused with `InvalidArgumentError`).
   */
  insecureNoToken?: boolean;
  /**
   * Host names it is reached under besides `localhost`, loopback addresses and the address a
   * request comes in on (a reverse proxy's name, a DNS name of this machine). A request naming
   * any other `Host` is refused (`403`), as a DNS-rebinding page's is.
   */
  allowedHosts?: readonly string[];
}

export const LISTEN_OPTIONS = ["port", "host", "token", "insecureNoToken", "allowedHosts"] as const;

/** `ListenOptions` checked (and no key outside `known`), defaults filled in. */
export function checkListen(
  opts: ListenOptions,
  known: readonly string[],
  listener: { what: string; port: number; exposes: string },
) {
  if (typeof opts !== "object" || opts === null) {
    throw new InvalidArgumentError("options", `must be an object of ${listener.what} options`);
  }
  assertKnownOptions(opts, known, listener.what);
  const port = opts.port ?? listener.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError("port", `must be an integer from 0 to 65535, got ${String(opts.port)}`);
  }
  if (opts.token !== undefined && (typeof opts.token !== "string" || opts.token.length < 8)) {
    throw new InvalidArgumentError("token", "must be a string of at least 8 characters");
  }
  const host = opts.host ?? "127.0.0.1";
  if (typeof host !== "string" || host === "") {
    throw new InvalidArgumentError("host", `must be an interface's address or name, got ${String(host)}`);
  }
  const insecureNoToken = opts.insecureNoToken ?? false;
  if (typeof insecureNoToken !== "boolean") {
    throw new InvalidArgumentError(
      "insecureNoToken",
      `must be true or false, got ${JSON.stringify(insecureNoToken)}`,
    );
  }
  checkBind(host, opts.token, insecureNoToken, listener.exposes);
  return { port, host, token: opts.token, allowedHosts: checkAllowedHosts(opts.allowedHosts) };
}

/** Headers on every reply: never framed by another page (clickjacking), types never sniffed. */
export function guardHeaders(res: ServerResponse): void {
  res.setHeader("content-security-policy", "frame-ancestors 'none'");
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "same-origin");
}

/** Throws `InvalidArgumentError` naming the first key of `options` not in `known`. */
function assertKnownOptions(options: object, known: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(key, `not an option of ${what} (its options: ${known.join(", ")})`);
    }
  }
}

/** `127.x.x.x`, `::1` (or `::ffff:127.x.x.x`) and `localhost`: reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Refuses to listen beyond loopback without a token, unless `insecureNoToken`. `what` names the
 * listener in the message.
 */
function checkBind(host: string, token: string | undefined, insecureNoToken: boolean, what: string): void {
  if (isLoopback(host) || token !== undefined || insecureNoToken) return;
  throw new InvalidArgumentError(
    "host",
    `${host} is not a loopback address, and without a token anyone who reaches it could use the ${what}: ` +
      "set a token (token, --token) or, knowingly, insecureNoToken: true (--insecure-no-token)",
  );
}

/** The names the listener is reached under (checked, lowercased, IPv6 without brackets). */
function checkAllowedHosts(raw: unknown): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    throw new InvalidArgumentError("allowedHosts", "must be an array of host names or addresses");
  }
  return raw.map((h: unknown) => {
    const name = typeof h === "string" ? bare(h) : "";
    if (name === "" || !(isIP(name) !== 0 || /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(name))) {
      throw new InvalidArgumentError(
        "allowedHosts",
        `each must be a host name or an address, without scheme or port, got ${JSON.stringify(h)}`,
      );
    }
    return name;
  });
}

/** A host lowercased, IPv6 brackets and an IPv4-mapped prefix dropped. */
function bare(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1");
}

/** A `Host` header value (`name:port`, `[v6]:port`) as a URL's `host`, or null when malformed. */
function hostOf(header: string): URL | null {
  try {
    return new URL(`http://${header}`);
  } catch {
    return null;
  }
}

/** Refuses (403) a request whose `Host` is not one this listener is reached under. */
export function checkHost(req: IncomingMessage, allowedHosts: readonly string[], what: string): void {
  const header = req.headers.host;
  const url = header === undefined ? null : hostOf(header);
  const name = url === null ? null : bare(url.hostname);
  const local = bare(req.socket.localAddress ?? "");
  if (name !== null && (isLoopback(name) || name === local || allowedHosts.includes(name))) return;
  throw new HttpError(
    403,
    `refused: Host ${JSON.stringify(header ?? "")} is not this ${what}'s (a page of another site, rebound to this address?); ` +
      "reach it as localhost or by its address, or name the host in allowedHosts (--allow-host)",
  );
}

/** An `Origin` or `Referer` value as a URL, or null when it names no web origin (`null`, `file:`). */
function originHost(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * Refuses (403) an action whose `Origin` (else `Referer`) names another site than the request's
 * own `Host` (or a name in `allowedHosts`). A request with neither (curl, a script) is let in:
 * a browser sends `Origin` with every cross-site `POST`.
 */
export function checkOrigin(req: IncomingMessage, allowedHosts: readonly string[]): void {
  const origin = req.headers.origin;
  const referer = req.headers.referer;
  const [header, value] = origin !== undefined ? ["Origin", origin] : ["Referer", referer];
  if (value === undefined) return;
  const from = originHost(value);
  const own = req.headers.host === undefined ? null : hostOf(req.headers.host);
  if (from !== null && (from.host === own?.host || allowedHosts.includes(bare(from.hostname)))) return;
  throw new HttpError(
    403,
    `refused: an action from ${JSON.stringify(value)} (${header}), not from this dashboard's own page; nothing was done`,
  );
}

/** Refuses (415) an action whose body is not declared `application/json`. */
export function checkJsonBody(req: IncomingMessage): void {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json") return;
  throw new HttpError(
    415,
    `an action takes a JSON body: send Content-Type: application/json (got ${JSON.stringify(type || "none")}); nothing was done`,
  );
}

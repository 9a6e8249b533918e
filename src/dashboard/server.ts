/**
 * `startDashboard(conn, opts)`: the live dashboard — a page (queues with counts and throughput
 * sparklines, jobs by state with paging, search by id, a job's detail and timeline, actions with
 * confirmation), its JSON API and live stream (`routes.ts`), and `/metrics`, served by Node's own
 * `http` server on loopback by default. `echomq dashboard` runs it from the command line.
 */
import { createServer, type Server } from "node:http";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import { sameToken, tokenCookie, tokenOf } from "./access.js";
import { checkHost, checkListen, guardHeaders, LISTEN_OPTIONS, type ListenOptions } from "./guard.js";
import { errorReply, HttpError, listen, sendJson, shut } from "./http.js";
import { loadAssets } from "./assets.js";
import { route } from "./routes.js";
import { Sampler } from "./sampler.js";
import { SRC } from "../here.js";

/**
 * Where and how it listens (`ListenOptions`: `port` default 3000, `host` default loopback,
 * `token`, `insecureNoToken`, `allowedHosts`), and what it shows.
 */
export interface DashboardOptions extends ListenOptions {
  /** Refuse every action (pause, retry, remove, …): the page shows, never steers. */
  readOnly?: boolean;
  /** Show these queues only; default: every queue the server holds (a bounded `SCAN`). */
  queues?: readonly string[];
  /** How often counts and throughput are sampled (ms). Default 1000. */
  sampleMs?: number;
}

export interface Dashboard {
  /** The page's address (with `?token=` when a token is set). */
  url: string;
  server: Server;
  close(): Promise<void>;
}

const KNOWN = [...LISTEN_OPTIONS, "readOnly", "queues", "sampleMs"];

/** The options checked (a typed error names the first bad one), defaults filled in. */
export function checkDashboardOptions(opts: DashboardOptions) {
  const listen = checkListen(opts, KNOWN, {
    what: "startDashboard",
    port: 3000,
    exposes: "dashboard (read every queue, and drain or remove its jobs)",
  });
  const sampleMs = opts.sampleMs ?? 1000;
  if (!Number.isInteger(sampleMs) || sampleMs < 50 || sampleMs > 3_600_000) {
    throw new InvalidArgumentError(
      "sampleMs",
      `must be an integer from 50 to 3600000, got ${String(opts.sampleMs)}`,
    );
  }
  if (opts.queues !== undefined && !Array.isArray(opts.queues)) {
    throw new InvalidArgumentError("queues", "must be an array of queue names");
  }
  for (const q of opts.queues ?? []) assertValidQueue(q);
  const readOnly = opts.readOnly ?? false;
  if (typeof readOnly !== "boolean") {
    throw new InvalidArgumentError("readOnly", `must be true or false, got ${JSON.stringify(readOnly)}`);
  }
  return { ...listen, readOnly, sampleMs, queues: opts.queues };
}

export async function startDashboard(conn: Connection, options: DashboardOptions = {}): Promise<Dashboard> {
  const opts = checkDashboardOptions(options);
  const sampler = new Sampler(conn, {
    sampleMs: opts.sampleMs,
    discoverMs: 10_000,
    keep: 60,
    ...(opts.queues ? { queues: opts.queues } : {}),
  });
  sampler.on("error", () => undefined); // a failed sample is retried at the next one
  const assets = await loadAssets(new URL("dashboard/public/", SRC));
  const ctx = { conn, sampler, readOnly: opts.readOnly, allowedHosts: opts.allowedHosts };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://dashboard");
    guardHeaders(res);
    const answer = async () => {
      checkHost(req, opts.allowedHosts, "dashboard");
      if (opts.token !== undefined && !sameToken(tokenOf(req, url), opts.token)) {
        throw new HttpError(401, "a token is required: open the page with ?token=<token>");
      }
      if (await route(ctx, req, res, url)) return;
      const extra: Record<string, string> = {};
      if (opts.token !== undefined && url.pathname === "/") extra["set-cookie"] = tokenCookie(opts.token);
      if (req.method === "GET" && assets.serve(req, res, url.pathname, extra)) return;
      throw new HttpError(404, `no such path: ${url.pathname}`);
    };
    answer().catch((err: unknown) => {
      const { status, body } = errorReply(err);
      if (!res.headersSent) sendJson(res, status, body);
      else res.end();
    });
  });
  const base = await listen(server, opts.port, opts.host);
  sampler.start();
  const query = opts.token === undefined ? "" : `?token=${encodeURIComponent(opts.token)}`;
  return {
    url: `${base}/${query}`,
    server,
    async close() {
      await shut(server);
      await sampler.stop();
    },
  };
}

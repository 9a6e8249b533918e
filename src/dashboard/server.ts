/**
 * `startDashboard(conn, opts)`: the live dashboard — a page (queues with counts and throughput
 * sparklines, jobs by state with paging, search by id, a job's detail and timeline, actions with
 * confirmation), its JSON API and live stream (`routes.ts`), and `/metrics`, served by Node's own
 * `http` server on loopback by default. `echomq dashboard` runs it from the command line.
 */
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import { sameToken, tokenCookie, tokenOf } from "./access.js";
import { errorReply, HttpError, sendJson } from "./http.js";
import { route } from "./routes.js";
import { Sampler } from "./sampler.js";
import { SRC } from "../here.js";

export interface DashboardOptions {
  /** TCP port; 0 picks a free one. Default 3000. */
  port?: number;
  /** Interface to listen on. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** Require this token on every request (`Authorization: Bearer`, or `?token=`). */
  token?: string;
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

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};

function checked(
  opts: DashboardOptions,
): Required<Omit<DashboardOptions, "token" | "queues">> & Pick<DashboardOptions, "token" | "queues"> {
  const port = opts.port ?? 3000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError("port", `must be an integer from 0 to 65535, got ${String(opts.port)}`);
  }
  const sampleMs = opts.sampleMs ?? 1000;
  if (!Number.isInteger(sampleMs) || sampleMs < 50 || sampleMs > 3_600_000) {
    throw new InvalidArgumentError(
      "sampleMs",
      `must be an integer from 50 to 3600000, got ${String(opts.sampleMs)}`,
    );
  }
  if (opts.token !== undefined && (typeof opts.token !== "string" || opts.token.length < 8)) {
    throw new InvalidArgumentError("token", "must be a string of at least 8 characters");
  }
  for (const q of opts.queues ?? []) assertValidQueue(q);
  return {
    port,
    host: opts.host ?? "127.0.0.1",
    readOnly: opts.readOnly ?? false,
    sampleMs,
    token: opts.token,
    queues: opts.queues,
  };
}

export async function startDashboard(conn: Connection, options: DashboardOptions = {}): Promise<Dashboard> {
  const opts = checked(options);
  const sampler = new Sampler(conn, {
    sampleMs: opts.sampleMs,
    discoverMs: 10_000,
    keep: 60,
    ...(opts.queues ? { queues: opts.queues } : {}),
  });
  sampler.on("error", () => undefined); // a failed sample is retried at the next one
  const assets = new URL("dashboard/public/", SRC);
  const ctx = { conn, sampler, readOnly: opts.readOnly };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://dashboard");
    const answer = async () => {
      if (opts.token !== undefined && !sameToken(tokenOf(req, url), opts.token)) {
        throw new HttpError(401, "a token is required: open the page with ?token=<token>");
      }
      if (await route(ctx, req, res, url)) return;
      const asset = req.method === "GET" ? ASSETS[url.pathname] : undefined;
      if (!asset) throw new HttpError(404, `no such path: ${url.pathname}`);
      const body = await readFile(new URL(asset.file, assets));
      const headers: Record<string, string> = { "content-type": asset.type, "cache-control": "no-store" };
      if (opts.token !== undefined && url.pathname === "/") headers["set-cookie"] = tokenCookie(opts.token);
      res.writeHead(200, headers);
      res.end(body);
    };
    answer().catch((err: unknown) => {
      const { status, body } = errorReply(err);
      if (!res.headersSent) sendJson(res, status, body);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  sampler.start();
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const query = opts.token === undefined ? "" : `?token=${encodeURIComponent(opts.token)}`;
  return {
    url: `http://${host}:${port}/${query}`,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sampler.stop();
    },
  };
}

/**
 * `serveMetrics(metrics, opts)`: a `Metrics` registry served at `GET /metrics` for Prometheus to
 * scrape, with the dashboard's guard (`guard.ts`): loopback by default, any other interface only
 * with a token (or `insecureNoToken`), and a request naming another site's `Host` refused.
 *
 *   const served = await serveMetrics(metrics, { port: 9464 });  // http://127.0.0.1:9464/metrics
 *   const remote = await serveMetrics(metrics, { host: "0.0.0.0", token: process.env.METRICS_TOKEN });
 */
import { createServer, type Server } from "node:http";
import type { Metrics } from "../metrics.js";
import { sameToken, tokenOf } from "./access.js";
import { checkHost, checkListen, guardHeaders, LISTEN_OPTIONS, type ListenOptions } from "./guard.js";
import { errorReply, HttpError, listen, sendJson, shut } from "./http.js";

/** `ListenOptions` (`port` default 9464, `host` default loopback, `token`, `insecureNoToken`, `allowedHosts`). */
export type MetricsServerOptions = ListenOptions;

export interface MetricsServer {
  /** The metrics' address, `http://host:port/metrics`. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function serveMetrics(
  metrics: Metrics,
  options: MetricsServerOptions = {},
): Promise<MetricsServer> {
  const opts = checkListen(options, LISTEN_OPTIONS, {
    what: "serveMetrics",
    port: 9464,
    exposes: "metrics (every queue's name and counts)",
  });
  const handler = metrics.handler();
  const server = createServer((req, res) => {
    guardHeaders(res);
    try {
      checkHost(req, opts.allowedHosts, "metrics server");
      const url = new URL(req.url ?? "/", "http://metrics");
      if (opts.token !== undefined && !sameToken(tokenOf(req, url), opts.token)) {
        throw new HttpError(401, "a token is required: send Authorization: Bearer <token>");
      }
      if (req.method !== "GET" || url.pathname !== "/metrics") {
        throw new HttpError(404, `only GET /metrics is answered here, not ${req.method} ${url.pathname}`);
      }
      handler(req, res);
    } catch (err) {
      const { status, body } = errorReply(err);
      sendJson(res, status, body);
    }
  });
  const base = await listen(server, opts.port, opts.host);
  return { url: `${base}/metrics`, server, close: () => shut(server) };
}

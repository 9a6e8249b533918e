/**
 * `echomq dashboard`: serves the live dashboard (src/dashboard/) until Ctrl-C. Loopback by
 * default; `--token` (or `ECHOMQ_DASHBOARD_TOKEN`) guards every request and is required to
 * listen on any other interface (or, knowingly, `--insecure-no-token`); `--read-only` refuses
 * every action; `--allow-host` names the hosts it is reached under besides its addresses.
 */
import { isLoopback } from "../dashboard/guard.js";
import { checkDashboardOptions, startDashboard } from "../dashboard/server.js";
import { assertValidQueue } from "../keyspace.js";
import { intOption } from "./args.js";
import type { Command } from "./command.js";

export const dashboard: Command = {
  name: "dashboard",
  summary: "serve the live dashboard (queues, jobs, actions, /metrics) until Ctrl-C",
  usage:
    "[--port 3000] [--host 127.0.0.1] [--token <t> | --insecure-no-token] [--allow-host <name>…] [--read-only] [--queue <name>…]",
  options: {
    port: { type: "string", value: "<port>", help: "TCP port (default 3000; 0 picks a free one)" },
    host: {
      type: "string",
      value: "<host>",
      help: "interface to listen on (default 127.0.0.1; any other needs --token)",
    },
    token: {
      type: "string",
      value: "<token>",
      help: "require this token on every request (default: $ECHOMQ_DASHBOARD_TOKEN; none)",
    },
    "insecure-no-token": {
      type: "boolean",
      help: "INSECURE: listen beyond loopback without a token (anyone who reaches the port steers every queue)",
    },
    "allow-host": {
      type: "string",
      multiple: true,
      value: "<name>",
      help: "a host name the page is reached under (a proxy's, a DNS name); others are refused",
    },
    "read-only": { type: "boolean", help: "show, never steer: every action is refused" },
    queue: {
      type: "string",
      multiple: true,
      value: "<name>",
      help: "show only these queues (default: all found)",
    },
  },
  positionals: [],
  async run(ctx, { values }) {
    const port = intOption(values, "port", 3000, 0, 65_535, "dashboard")!;
    const queues = values.queue as string[] | undefined;
    for (const q of queues ?? []) assertValidQueue(q);
    const token = (values.token as string | undefined) ?? process.env.ECHOMQ_DASHBOARD_TOKEN;
    const allowedHosts = values["allow-host"] as string[] | undefined;
    const insecureNoToken = values["insecure-no-token"] === true;
    const options = {
      port,
      host: (values.host as string | undefined) ?? "127.0.0.1",
      readOnly: values["read-only"] === true,
      insecureNoToken,
      ...(token ? { token } : {}),
      ...(queues ? { queues } : {}),
      ...(allowedHosts ? { allowedHosts } : {}),
    };
    checkDashboardOptions(options); // refused before any connection is made
    if (insecureNoToken && !token && !isLoopback(options.host)) {
      ctx.io.err(
        `echomq dashboard: WARNING: --insecure-no-token: no token guards ${options.host}; anyone who reaches the port reads every queue${options.readOnly ? "" : " and can drain, clean or remove its jobs"}`,
      );
    }
    const conn = await ctx.connection();
    const dash = await startDashboard(conn, options);
    ctx.io.out(
      ctx.globals.json ? JSON.stringify({ url: dash.url }) : `dashboard on ${dash.url} (Ctrl-C to stop)`,
    );
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await dash.close();
    return undefined;
  },
};

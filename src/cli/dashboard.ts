/**
 * `echomq dashboard`: serves the live dashboard (src/dashboard/) until Ctrl-C. Loopback by
 * default; `--token` (or `ECHOMQ_DASHBOARD_TOKEN`) guards every request, `--read-only` refuses
 * every action.
 */
import { assertValidQueue } from "../keyspace.js";
import { startDashboard } from "../dashboard/server.js";
import { intOption } from "./args.js";
import type { Command } from "./command.js";

export const dashboard: Command = {
  name: "dashboard",
  summary: "serve the live dashboard (queues, jobs, actions, /metrics) until Ctrl-C",
  usage: "[--port 3000] [--host 127.0.0.1] [--token <t>] [--read-only] [--queue <name>…]",
  options: {
    port: { type: "string", value: "<port>", help: "TCP port (default 3000; 0 picks a free one)" },
    host: { type: "string", value: "<host>", help: "interface to listen on (default 127.0.0.1)" },
    token: {
      type: "string",
      value: "<token>",
      help: "require this token on every request (default: $ECHOMQ_DASHBOARD_TOKEN; none)",
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
    const conn = await ctx.connection();
    const dash = await startDashboard(conn, {
      port,
      host: (values.host as string | undefined) ?? "127.0.0.1",
      readOnly: values["read-only"] === true,
      ...(token ? { token } : {}),
      ...(queues ? { queues } : {}),
    });
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

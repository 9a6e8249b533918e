/**
 * The dashboard's HTTP API (JSON; every path under `/api/`), its live stream and `/metrics`:
 *
 *   GET  /api/config                              { readOnly, wire, cluster, version }
 *   GET  /api/queues                              the latest snapshot (counts, sparklines)
 *   GET  /api/stream                              server-sent events: a `snapshot` per sample
 *   GET  /api/queues/:q/jobs?state&offset&limit   one page of a state's jobs
 *   GET  /api/queues/:q/jobs/:id                  a job's row and timeline
 *   POST /api/queues/:q/pause | resume | drain    queue actions (every POST: JSON, from this page)
 *   POST /api/queues/:q/clean  { state, olderThanMs, limit }
 *   POST /api/queues/:q/jobs/:id/retry | remove | promote
 *   GET  /metrics                                 Prometheus text (the queues of the snapshot)
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isValidBrandedId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { isValidQueue } from "../keyspace.js";
import { Metrics, PACKAGE_VERSION } from "../metrics.js";
import { type JobState, Queue } from "../queue.js";
import { checkJsonBody, checkOrigin } from "./guard.js";
import { HttpError, intParam, readJson, sendJson } from "./http.js";
import type { Sampler, Snapshot } from "./sampler.js";
import { jobView, timeline } from "./views.js";

export interface RouteContext {
  conn: Connection;
  sampler: Sampler;
  readOnly: boolean;
  /** The names besides its own the dashboard is reached under (`guard.ts`). */
  allowedHosts: readonly string[];
}

const STATES: readonly JobState[] = ["pending", "scheduled", "active", "completed", "dead", "waiting"];
const CLEANABLE = ["completed", "dead"] as const;

function queueName(raw: string): string {
  const name = decodeURIComponent(raw);
  if (!isValidQueue(name)) throw new HttpError(400, `not a queue name: ${JSON.stringify(name)}`);
  return name;
}

function idParam(raw: string): string {
  const id = decodeURIComponent(raw);
  if (!isValidBrandedId(id)) throw new HttpError(400, `not a job id: ${JSON.stringify(id)}`);
  return id;
}

function stateParam(raw: unknown, allowed: readonly string[]): string {
  if (typeof raw !== "string" || !allowed.includes(raw)) {
    throw new HttpError(400, `state must be one of ${allowed.join(", ")}, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

/** Streams every snapshot to one client as server-sent events until it disconnects. */
function stream(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  const send = (snapshot: Snapshot) => res.write(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`);
  ctx.sampler.snapshot().then(send, () => undefined);
  ctx.sampler.on("snapshot", send);
  req.on("close", () => ctx.sampler.off("snapshot", send));
}

async function metrics(ctx: RouteContext, res: ServerResponse): Promise<void> {
  const snapshot = await ctx.sampler.snapshot();
  const m = new Metrics(ctx.conn, {
    queues: snapshot.queues.map((q) => q.name),
    counted: new Map(snapshot.queues.map((q) => [q.name, q.counted])),
  });
  const body = await m.registry.metrics();
  res.writeHead(200, { "content-type": m.registry.contentType });
  res.end(body);
}

/** Answers one API request; false when the path is not the API's. */
export async function route(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const method = req.method ?? "GET";
  const path = url.pathname;
  if (method === "GET" && path === "/metrics") {
    await metrics(ctx, res);
    return true;
  }
  if (!path.startsWith("/api/")) return false;
  const parts = path.slice(5).split("/");
  const open = (raw: string) => new Queue(queueName(raw), ctx.conn);

  if (method === "GET") {
    if (path === "/api/config") {
      sendJson(res, 200, {
        readOnly: ctx.readOnly,
        wire: ctx.conn.wire,
        cluster: ctx.conn.cluster,
        version: PACKAGE_VERSION,
      });
    } else if (path === "/api/queues") {
      sendJson(res, 200, await ctx.sampler.snapshot());
    } else if (path === "/api/stream") {
      stream(ctx, req, res);
    } else if (parts[0] === "queues" && parts[2] === "jobs" && parts.length === 3) {
      const queue = open(parts[1]!);
      const state = stateParam(url.searchParams.get("state") ?? "pending", STATES) as JobState;
      const offset = intParam(url, "offset", 0, 1_000_000_000);
      const limit = Math.max(1, intParam(url, "limit", 20, 200));
      const page = await queue.getJobs(state, { offset, limit });
      const counts = await queue.counts();
      sendJson(res, 200, { state, offset, limit, total: counts[state], jobs: page.map(jobView) });
    } else if (parts[0] === "queues" && parts[2] === "jobs" && parts.length === 4) {
      const queue = open(parts[1]!);
      const id = idParam(parts[3]!);
      const job = await queue.getJob(id);
      if (job === null) throw new HttpError(404, `no job ${id} in queue ${queue.name}`);
      sendJson(res, 200, { job: { ...jobView(job), timeline: await timeline(ctx.conn, job.lane, id) } });
    } else {
      throw new HttpError(404, `no such path: ${path}`);
    }
    return true;
  }

  if (method !== "POST") throw new HttpError(405, `${method} is not answered here`);
  checkOrigin(req, ctx.allowedHosts);
  if (ctx.readOnly) throw new HttpError(403, "this dashboard is read-only (started with --read-only)");
  checkJsonBody(req);
  const body = await readJson(req);
  if (parts[0] !== "queues" || parts[1] === undefined) throw new HttpError(404, `no such path: ${path}`);
  const queue = open(parts[1]);
  if (parts.length === 3) {
    const action = parts[2];
    if (action === "pause") sendJson(res, 200, { ok: await queue.pause() });
    else if (action === "resume") sendJson(res, 200, { ok: await queue.resume() });
    else if (action === "drain") sendJson(res, 200, { removed: await queue.drain() });
    else if (action === "clean") {
      const state = stateParam(body.state, CLEANABLE) as (typeof CLEANABLE)[number];
      const olderThanMs = Number(body.olderThanMs ?? 0);
      const limit = Number(body.limit ?? 1000);
      sendJson(res, 200, { removed: await queue.clean(state, { olderThanMs, limit }) });
    } else throw new HttpError(404, `no such action: ${action}`);
  } else if (parts.length === 5 && parts[2] === "jobs") {
    const id = idParam(parts[3]!);
    const action = parts[4];
    if (action === "retry") {
      await queue.retry(id);
      sendJson(res, 200, { ok: true });
    } else if (action === "remove") sendJson(res, 200, { ok: await queue.remove(id) });
    else if (action === "promote") {
      await queue.promote(id);
      sendJson(res, 200, { ok: true });
    } else throw new HttpError(404, `no such action: ${action}`);
  } else throw new HttpError(404, `no such path: ${path}`);
  ctx.sampler.rediscover();
  return true;
}

/**
 * The dashboard's HTTP API (JSON; every path under `/api/`), its live stream and `/metrics`:
 *
 *   GET  /api/config                              { readOnly, wire, cluster, version }
 *   GET  /api/queues[?offset&limit&filter&current] the latest snapshot (counts, sparklines); with
 *                                                 `limit`, one page of it (queues whose name holds
 *                                                 `filter`) and the queue `current` names
 *   GET  /api/stream[?offset&limit&filter&current] server-sent events: a `snapshot` (or its page) per
 *                                                 sample; a page's queues are watched while it is open
 *   GET  /api/watch?q=a&q=b                       the queues a page shows (sampled each time among many)
 *   GET  /api/queues/:q/jobs?state&offset&limit   one page of a state's jobs
 *   GET  /api/queues/:q/jobs/:id                  a job's row, timeline and times
 *   GET  /api/queues/:q/jobs/:id/flow             a flow's parent and its children as its row records them
 *   GET  /api/queues/:q/schedules                 the schedules, each with its next instants
 *   GET  /api/queues/:q/flow-control              limits, groups active or parked, parked jobs
 *   GET  /api/queues/:q/series                    the last hour, per minute (completed, failed, latency)
 *   GET  /api/queues/:q/find?key                  the job added with an idempotency key
 *   GET  /api/queues/:q/search?state&text         jobs whose payload holds text (a bounded scan)
 *   GET  /api/workers                             the workers connected now, and per queue (listWorkers)
 *   POST /api/queues/:q/pause | resume | drain    queue actions (every POST: JSON, from this page)
 *   POST /api/queues/:q/clean  { state, olderThanMs, limit }
 *   POST /api/queues/:q/bulk   { action, ids } | { action, state, max }   retry, promote, remove many
 *   POST /api/queues/:q/add    { data, opts }     add a job (Queue.add: name, priority, delay, maxAttempts, key)
 *   POST /api/queues/:q/jobs/:id/retry | remove | promote
 *   POST /api/queues/:q/jobs/:id/data  { data }    replace a waiting job's data (Queue.updateData)
 *   POST /api/queues/:q/schedules/:name/remove
 *   POST /api/queues/:q/schedules/:name/pause     (and /resume: from its next instant after now)
 *   GET  /metrics                                 Prometheus text (every queue of the listing, read at the scrape)
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isValidBrandedId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { isValidQueue } from "../keyspace.js";
import { Metrics, PACKAGE_VERSION } from "../metrics.js";
import { type JobState, Queue } from "../queue.js";
import { checkJsonBody, checkOrigin } from "./guard.js";
import { HttpError, intParam, readJson, sendJson } from "./http.js";
import { MAX_WATCH, type Sampler, type Snapshot } from "./sampler.js";
import { bulk } from "./bulk.js";
import { BUCKET_MS } from "./series.js";
import { flowControlView, flowView, schedulesView } from "./extras.js";
import { findByKey, jobDetail, jobsPage, searchPayload } from "./reads.js";
import { addJob, editData } from "./steer.js";
import { listWorkers, workersPerQueue } from "../observe/workers.js";

interface RouteContext {
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

/** Queues a page of the snapshot holds at most. */
const MAX_PAGE = 200;

/**
 * The snapshot, or (with `limit`) one page of it: the queues whose name holds `filter`, from
 * `offset`, and the queue `current` names (a queue's view shows its counts off the page too).
 * A page's queues are watched (sampled each time among many) while a page asks for them.
 */
function pager(ctx: RouteContext, url: URL): (snapshot: Snapshot) => unknown {
  if (!url.searchParams.has("limit")) return (snapshot) => snapshot;
  const offset = intParam(url, "offset", 0, 1_000_000_000);
  const limit = Math.max(1, intParam(url, "limit", 50, MAX_PAGE));
  const filter = url.searchParams.get("filter") ?? "";
  const current = url.searchParams.get("current");
  return (snapshot) => {
    const matching = filter ? snapshot.queues.filter((q) => q.name.includes(filter)) : snapshot.queues;
    const from = Math.min(offset, Math.max(0, Math.floor((matching.length - 1) / limit) * limit));
    const queues = matching.slice(from, from + limit);
    const head = current === null ? undefined : snapshot.queues.find((q) => q.name === current);
    ctx.sampler.watch([...queues.map((q) => q.name), ...(head ? [head.name] : [])]);
    return {
      at: snapshot.at,
      complete: snapshot.complete,
      total: matching.length,
      offset: from,
      limit,
      queues,
      ...(head ? { current: head } : {}),
    };
  };
}

/** Streams every snapshot (or its page) to one client as server-sent events until it disconnects. */
function stream(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const view = pager(ctx, url);
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  const send = (snapshot: Snapshot) =>
    res.write(`event: snapshot\ndata: ${JSON.stringify(view(snapshot))}\n\n`);
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
      const view = pager(ctx, url);
      sendJson(res, 200, view(await ctx.sampler.snapshot()));
    } else if (path === "/api/watch") {
      // The queues a page has on screen: sampled each time among many (memory only, no write).
      const names = url.searchParams.getAll("q").filter(isValidQueue);
      ctx.sampler.watch(names);
      sendJson(res, 200, { watching: Math.min(names.length, MAX_WATCH) });
    } else if (path === "/api/workers") {
      const workers = await listWorkers(ctx.conn);
      sendJson(res, 200, { at: Date.now(), workers, queues: [...workersPerQueue(workers).values()] });
    } else if (path === "/api/stream") {
      stream(ctx, req, res, url);
    } else if (parts[0] === "queues" && parts[2] === "jobs" && parts.length === 3) {
      const queue = open(parts[1]!);
      const state = stateParam(url.searchParams.get("state") ?? "pending", STATES) as JobState;
      const offset = intParam(url, "offset", 0, 1_000_000_000);
      const limit = Math.max(1, intParam(url, "limit", 20, 200));
      sendJson(res, 200, { state, offset, limit, ...(await jobsPage(queue, state, offset, limit)) });
    } else if (parts[0] === "queues" && parts[2] === "jobs" && parts.length === 4) {
      const queue = open(parts[1]!);
      const id = idParam(parts[3]!);
      const job = await jobDetail(ctx.conn, queue, id);
      if (job === null) throw new HttpError(404, `no job ${id} in queue ${queue.name}`);
      sendJson(res, 200, { job });
    } else if (parts[0] === "queues" && parts[2] === "jobs" && parts[4] === "flow" && parts.length === 5) {
      const queue = open(parts[1]!);
      const id = idParam(parts[3]!);
      const flow = await flowView(ctx.conn, queue, id, (await ctx.sampler.snapshot()).queues);
      if (flow === null) throw new HttpError(404, `no job ${id} in queue ${queue.name}`);
      sendJson(res, 200, flow);
    } else if (parts[0] === "queues" && parts[2] === "schedules" && parts.length === 3) {
      sendJson(res, 200, { schedules: await schedulesView(open(parts[1]!)) });
    } else if (parts[0] === "queues" && parts[2] === "flow-control" && parts.length === 3) {
      sendJson(res, 200, await flowControlView(ctx.conn, open(parts[1]!)));
    } else if (parts[0] === "queues" && parts[2] === "series" && parts.length === 3) {
      const name = queueName(parts[1]!);
      const buckets = ctx.sampler.hour(name);
      sendJson(res, 200, { bucketMs: BUCKET_MS, sampled: buckets !== null, buckets: buckets ?? [] });
    } else if (parts[0] === "queues" && parts[2] === "find" && parts.length === 3) {
      const queue = open(parts[1]!);
      sendJson(res, 200, { id: await findByKey(ctx.conn, queue, url.searchParams.get("key") ?? "") });
    } else if (parts[0] === "queues" && parts[2] === "search" && parts.length === 3) {
      const queue = open(parts[1]!);
      const state = stateParam(url.searchParams.get("state") ?? "pending", STATES) as JobState;
      sendJson(res, 200, {
        state,
        ...(await searchPayload(queue, state, url.searchParams.get("text") ?? "")),
      });
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
  if (parts.length === 3 && parts[2] === "add") {
    sendJson(res, 200, await addJob(ctx.conn, queueName(parts[1]), body));
    ctx.sampler.rediscover();
    return true;
  }
  const queue = open(parts[1]);
  if (parts.length === 3) {
    const action = parts[2];
    if (action === "pause") sendJson(res, 200, { ok: await queue.pause() });
    else if (action === "resume") sendJson(res, 200, { ok: await queue.resume() });
    else if (action === "drain") sendJson(res, 200, { removed: await queue.drain() });
    else if (action === "bulk") sendJson(res, 200, await bulk(queue, body));
    else if (action === "clean") {
      const state = stateParam(body.state, CLEANABLE) as (typeof CLEANABLE)[number];
      const olderThanMs = Number(body.olderThanMs ?? 0);
      const limit = Number(body.limit ?? 1000);
      sendJson(res, 200, { removed: await queue.clean(state, { olderThanMs, limit }) });
    } else throw new HttpError(404, `no such action: ${action}`);
  } else if (parts.length === 5 && parts[2] === "schedules" && parts[4] === "remove") {
    sendJson(res, 200, { ok: await queue.unschedule(decodeURIComponent(parts[3]!)) });
  } else if (parts.length === 5 && parts[2] === "schedules" && parts[4] === "pause") {
    sendJson(res, 200, { ok: await queue.pauseSchedule(decodeURIComponent(parts[3]!)) });
  } else if (parts.length === 5 && parts[2] === "schedules" && parts[4] === "resume") {
    sendJson(res, 200, await queue.resumeSchedule(decodeURIComponent(parts[3]!)));
  } else if (parts.length === 5 && parts[2] === "jobs") {
    const id = idParam(parts[3]!);
    const action = parts[4];
    if (action === "retry") {
      await queue.retry(id);
      sendJson(res, 200, { ok: true });
    } else if (action === "remove") sendJson(res, 200, { ok: await queue.remove(id) });
    else if (action === "data") {
      await editData(queue, id, body);
      sendJson(res, 200, { ok: true });
    } else if (action === "promote") {
      await queue.promote(id);
      sendJson(res, 200, { ok: true });
    } else throw new HttpError(404, `no such action: ${action}`);
  } else throw new HttpError(404, `no such path: ${path}`);
  ctx.sampler.rediscover();
  return true;
}

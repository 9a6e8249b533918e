/**
 * Small HTTP helpers of the dashboard and metrics servers: listening and closing, JSON replies,
 * typed HTTP errors, bounded bodies.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EchoMQError, InvalidArgumentError } from "../errors.js";

/** An error with the HTTP status it answers with. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** The status and message an error answers with: bad input 400, EchoMQ's own refusals 409. */
export function errorReply(err: unknown): { status: number; body: { error: string; code?: string } } {
  if (err instanceof HttpError) return { status: err.status, body: { error: err.message } };
  if (err instanceof InvalidArgumentError)
    return { status: 400, body: { error: err.message, code: err.code } };
  if (err instanceof EchoMQError) return { status: 409, body: { error: err.message, code: err.code } };
  return { status: 500, body: { error: err instanceof Error ? err.message : String(err) } };
}

/** The request's JSON body (at most 64 KiB), `{}` when empty. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 65_536) throw new HttpError(413, "request body over 64 KiB");
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("not an object");
    return body as Record<string, unknown>;
  } catch {
    throw new HttpError(400, "request body must be a JSON object");
  }
}

/** A non-negative integer query parameter, or `fallback` when absent. */
export function intParam(url: URL, name: string, fallback: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) > max) {
    throw new HttpError(400, `${name} must be an integer from 0 to ${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** Listens on `host:port`; resolves with the address answered at, `http://host:port` (the port picked when 0). */
export async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
}

/** Closes the server and every connection it holds (an open event stream included). */
export async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * How a worker treats an error: fatal (it stops, and says so once) or retried (with backoff,
 * counted); and where an error goes — the `error` event when someone listens, else the logger.
 */
import type { Connection } from "../connector/connection.js";
import {
  AuthError,
  ConnectionClosedError,
  ServerError,
  TracingUnavailableError,
  VersionFenceError,
  WireRefusalError,
} from "../errors.js";
import type { WorkerLogger } from "./options.js";

/** Server refusals no retry can cure: permissions, credentials, a missing command (no module). */
const FATAL_REPLY = /^(NOPERM|NOAUTH|WRONGPASS)\b|^ERR unknown command/;

/**
 * True when no retry can succeed: the connection stopped for good (fence, credentials), was
 * closed, cannot carry the call on its wire, the server refuses the call for a reason that does
 * not pass with time, or tracing is on without `@opentelemetry/api`.
 */
export function isFatal(err: unknown, conn?: Connection): boolean {
  if (conn?.fatal !== undefined) return true;
  if (
    err instanceof VersionFenceError ||
    err instanceof AuthError ||
    err instanceof WireRefusalError ||
    err instanceof ConnectionClosedError ||
    err instanceof TracingUnavailableError
  ) {
    return true;
  }
  return err instanceof ServerError && FATAL_REPLY.test(err.reply);
}

/** The wait before the `failures`-th retry after an error: 25 ms doubling to 1 s, ±20% jitter. */
export function retryAfterError(failures: number, random = Math.random): number {
  const base = Math.min(25 * 2 ** Math.max(failures - 1, 0), 1000);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** A short, stable key for "the same error again": its class and message, without digits. */
function errorKey(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\d+/g, "#").slice(0, 200);
}

/**
 * The default logger: one `console.warn` line per distinct error per `windowMs` (default one
 * minute); repeats inside the window are counted and the count is printed with the next line.
 */
export function rateLimitedConsole(
  windowMs = 60_000,
  now: () => number = Date.now,
  print: (line: string) => void = (line) => console.warn(line),
): WorkerLogger {
  const seen = new Map<string, { at: number; repeats: number }>();
  return {
    warn(message: string, error: unknown): void {
      const key = `${message}\n${errorKey(error)}`;
      const entry = seen.get(key);
      const t = now();
      if (entry && t - entry.at < windowMs) {
        entry.repeats += 1;
        return;
      }
      const repeats = entry?.repeats ?? 0;
      seen.delete(key);
      seen.set(key, { at: t, repeats: 0 });
      if (seen.size > 100) seen.delete(seen.keys().next().value as string);
      const tail =
        repeats > 0 ? ` (and ${repeats} more like it in the last ${Math.round(windowMs / 1000)} s)` : "";
      const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      print(`${message}: ${detail}${tail}`);
    },
  };
}

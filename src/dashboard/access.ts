/**
 * Who may use the dashboard: with a token, every request carries it — `Authorization: Bearer
 * <token>`, `?token=`, or the cookie the page gets when it is opened with `?token=` (so its own
 * script, style sheet and event stream, which cannot set headers, are let in); without one,
 * anyone who reaches the port. A read-only dashboard refuses every action (`403`).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The cookie that carries the token for the page's own requests. */
const TOKEN_COOKIE = "echomq_token";

/** The token a request carries (header, query, then cookie), or undefined. */
export function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith("Bearer ")) return auth.slice(7).trim();
  const query = url.searchParams.get("token");
  if (query !== null) return query;
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === TOKEN_COOKIE) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

/** The `Set-Cookie` value handing the token to the page (not readable by scripts, this site only). */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Whether `given` equals `expected`, in time independent of where they differ. */
export function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

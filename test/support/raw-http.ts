/**
 * One HTTP request as any client (a browser of another site, a rebinding page) could send it,
 * every header as given — `Host` included, which `fetch` does not let a caller set.
 */
import { request } from "node:http";

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body parsed, when it is JSON. */
  json: any;
}

export function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawReply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? "GET",
        headers: init.headers ?? {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          clearTimeout(timer);
          const body = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(body);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
        });
      },
    );
    // A reply that does not end (an event stream let in) fails the request instead of hanging it.
    timer = setTimeout(() => {
      reject(new Error(`${url}: no complete reply within 10 s`));
      req.destroy();
    }, 10_000);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(init.body);
  });
}

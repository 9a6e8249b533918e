/**
 * The page's files (`public/`), read once when the dashboard starts. The scripts and the
 * stylesheet are served under a path that names a hash of every file, `/v/<hash>/<file>`, with
 * `Cache-Control: immutable` and an ETag: a reload asks for none of them again, and a dashboard
 * started from other files names another path. The page itself (`/`) is never cached and names
 * those paths; it and the unversioned paths (`/app.js`, kept for links) are read as `no-store`.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
};
/** A file of the page: lowercase letters and dashes, `.js` or `.css`. */
const FILE = /^([a-z-]+)\.(js|css)$/;
const VERSIONED = /^\/v\/([0-9a-f]{16})\/([a-z-]+\.(?:js|css))$/;
/** A year: the versioned paths never change. */
const IMMUTABLE = "public, max-age=31536000, immutable";

interface Assets {
  /** The hash every versioned path names. */
  version: string;
  /** Answers a GET of the page or one of its files; false when `path` is none of them. */
  serve(req: IncomingMessage, res: ServerResponse, path: string, extra: Record<string, string>): boolean;
}

export async function loadAssets(dir: URL): Promise<Assets> {
  const names = (await readdir(dir)).filter((n) => FILE.test(n) || n === "index.html").sort();
  const files = new Map<string, Asset>();
  const all = createHash("sha256");
  for (const name of names) {
    const body = await readFile(new URL(name, dir));
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    all.update(`${name}\0${hash}\0`);
    files.set(name, { body, type: TYPES[name.split(".").pop()!]!, etag: `"${hash}"` });
  }
  const version = all.digest("hex").slice(0, 16);
  const page = files.get("index.html");
  if (page) {
    // The page names its files under the versioned path (relative: a module's imports follow it).
    const text = page.body
      .toString("utf8")
      .replace(/(href|src)="([a-z-]+\.(?:js|css))"/g, (m, attr: string, file: string) =>
        files.has(file) ? `${attr}="v/${version}/${file}"` : m,
      );
    files.set("index.html", { ...page, body: Buffer.from(text, "utf8") });
  }
  return {
    version,
    serve(req, res, path, extra) {
      const versioned = VERSIONED.exec(path);
      if (versioned && versioned[1] === version) {
        const asset = files.get(versioned[2]!);
        if (!asset) return false;
        const headers = { "content-type": asset.type, "cache-control": IMMUTABLE, etag: asset.etag };
        const match = req.headers["if-none-match"];
        if (match !== undefined && match.split(/\s*,\s*/).includes(asset.etag)) {
          res.writeHead(304, headers);
          res.end();
        } else {
          res.writeHead(200, headers);
          res.end(asset.body);
        }
        return true;
      }
      const name = path.slice(1);
      const asset = path === "/" ? files.get("index.html") : FILE.test(name) ? files.get(name) : undefined;
      if (!asset) return false;
      res.writeHead(200, { "content-type": asset.type, "cache-control": "no-store", ...extra });
      res.end(asset.body);
      return true;
    },
  };
}

/**
 * The dashboard refuses to be driven or read by another site, on both wires, with real requests
 * against a real server (sent as a browser would send them, `Host` and `Origin` included): a
 * cross-site form, a foreign `Referer`, a body that is not JSON, a DNS-rebinding `Host` — each
 * answered `403` / `415` with nothing done (the queue's counts read from the server) — while the
 * page's own JSON requests act. The page in Chromium: `dashboard.browser.test.ts`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startDashboard } from "../src/dashboard/server.js";
import { Queue } from "../src/index.js";
import { raw } from "./support/raw-http.js";
import { forEachWire } from "./support/wires.js";

const JSON_TYPE = { "content-type": "application/json" };

forEachWire("dashboard security", (ctx) => {
  test("a cross-site form POST, a JSON-shaped text/plain form and a foreign Referer: 403, nothing drained", async () => {
    const { conn } = ctx();
    const q = new Queue("sec-csrf", conn);
    await q.addBulk(Array.from({ length: 3 }, (_, i) => ({ payload: `j${i}` })));
    const dash = await startDashboard(conn, { port: 0 });
    const drain = new URL("/api/queues/sec-csrf/drain", dash.url).href;
    try {
      const evil = "http://evil.example";
      const attempts: [string, Record<string, string>, string][] = [
        ["an empty form", { origin: evil, "content-type": "application/x-www-form-urlencoded" }, ""],
        ["a text/plain form shaped as JSON", { origin: evil, "content-type": "text/plain" }, '{"a":"="}'],
        ["JSON from another site", { origin: evil, ...JSON_TYPE }, "{}"],
        ["another port of this host", { origin: "http://127.0.0.1:1", ...JSON_TYPE }, "{}"],
        ["an opaque origin", { origin: "null", ...JSON_TYPE }, "{}"],
        ["a foreign Referer", { referer: `${evil}/page.html`, ...JSON_TYPE }, "{}"],
      ];
      for (const [what, headers, body] of attempts) {
        const res = await raw(drain, { method: "POST", headers, body });
        assert.equal(res.status, 403, what);
        assert.match(
          res.json.error,
          /^refused: an action from "[^"]+" \((Origin|Referer)\), not from this dashboard's own page; nothing was done$/,
          what,
        );
      }
      const pause = await raw(new URL("/api/queues/sec-csrf/pause", dash.url).href, {
        method: "POST",
        headers: { origin: evil, "content-type": "application/x-www-form-urlencoded" },
      });
      assert.equal(pause.status, 403);
      const counts = await q.counts();
      assert.deepEqual([counts.pending, counts.paused], [3, false], "nothing drained, nothing paused");
    } finally {
      await dash.close();
    }
  });

  test("an action takes JSON only (415, nothing done); the page's own JSON request acts", async () => {
    const { conn } = ctx();
    const q = new Queue("sec-json", conn);
    await q.addBulk(Array.from({ length: 4 }, (_, i) => ({ payload: `j${i}` })));
    const dash = await startDashboard(conn, { port: 0 });
    const drain = new URL("/api/queues/sec-json/drain", dash.url);
    try {
      for (const [type, body] of [
        ["text/plain", "{}"],
        ["application/x-www-form-urlencoded", ""],
        ["multipart/form-data; boundary=x", "--x--"],
        [undefined, ""],
      ] as const) {
        const res = await raw(drain.href, {
          method: "POST",
          headers: type === undefined ? {} : { "content-type": type },
          body,
        });
        assert.equal(res.status, 415, String(type));
        assert.equal(
          res.json.error,
          `an action takes a JSON body: send Content-Type: application/json (got ${JSON.stringify(type?.split(";")[0] ?? "none")}); nothing was done`,
        );
      }
      assert.equal((await q.counts()).pending, 4, "nothing drained by the refused requests");
      // As the page sends it: its own origin, JSON.
      const own = await raw(drain.href, {
        method: "POST",
        headers: { origin: drain.origin, referer: `${drain.origin}/`, ...JSON_TYPE },
        body: "{}",
      });
      assert.equal(own.status, 200);
      assert.deepEqual(own.json, { removed: 4 });
      assert.equal((await q.counts()).pending, 0);
      // Reached as localhost: its Origin matches its Host.
      await q.add("again");
      const local = `http://localhost:${drain.port}`;
      const viaName = await raw(drain.href, {
        method: "POST",
        headers: { host: `localhost:${drain.port}`, origin: local, ...JSON_TYPE },
        body: "{}",
      });
      assert.deepEqual([viaName.status, viaName.json], [200, { removed: 1 }]);
    } finally {
      await dash.close();
    }
  });

  test("a foreign Host (DNS rebinding) is refused on every route, reads included; allowedHosts admits a name", async () => {
    const { conn } = ctx();
    const q = new Queue("sec-host", conn);
    await q.add("secret payload");
    const dash = await startDashboard(conn, { port: 0, sampleMs: 100, allowedHosts: ["dash.internal"] });
    const { port } = new URL(dash.url);
    const at = (path: string) => new URL(path, dash.url).href;
    try {
      const rebound = { host: `evil.example:${port}` };
      for (const path of [
        "/",
        "/app.js",
        "/api/config",
        "/api/queues",
        "/api/queues/sec-host/jobs?state=pending",
        "/metrics",
        "/api/stream",
      ]) {
        const res = await raw(at(path), { headers: rebound });
        assert.equal(res.status, 403, path);
        assert.equal(
          res.json.error,
          `refused: Host "evil.example:${port}" is not this dashboard's (a page of another site, rebound to this address?); reach it as localhost or by its address, or name the host in allowedHosts (--allow-host)`,
          path,
        );
        assert.ok(!res.body.includes("secret payload"), path);
      }
      const pause = await raw(at("/api/queues/sec-host/pause"), {
        method: "POST",
        headers: { ...rebound, origin: `http://evil.example:${port}`, ...JSON_TYPE },
        body: "{}",
      });
      assert.equal(pause.status, 403);
      assert.equal((await q.counts()).paused, false, "not paused");
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `[::1]:${port}`,
        `dash.internal:${port}`,
      ]) {
        const res = await raw(at("/api/queues"), { headers: { host } });
        assert.equal(res.status, 200, host);
      }
      const named = await raw(at("/api/queues/sec-host/pause"), {
        method: "POST",
        headers: { host: "dash.internal", origin: "https://dash.internal", ...JSON_TYPE },
        body: "{}",
      });
      assert.deepEqual([named.status, named.json], [200, { ok: true }]);
      assert.equal((await q.counts()).paused, true);
    } finally {
      await dash.close();
    }
  });

  test("never framed by another page; the token's cookie is HttpOnly and SameSite=Strict", async () => {
    const { conn } = ctx();
    const dash = await startDashboard(conn, { port: 0, token: "cookie-token-7" });
    try {
      const page = await raw(dash.url);
      assert.equal(page.status, 200);
      const cookie = String(page.headers["set-cookie"]);
      assert.match(cookie, /^echomq_token=cookie-token-7;/);
      assert.match(cookie, /; HttpOnly(;|$)/);
      assert.match(cookie, /; SameSite=Strict(;|$)/);
      for (const res of [page, await raw(new URL("/api/queues", dash.url).origin)]) {
        assert.equal(res.headers["x-frame-options"], "DENY");
        assert.equal(res.headers["content-security-policy"], "frame-ancestors 'none'");
        assert.equal(res.headers["x-content-type-options"], "nosniff");
      }
    } finally {
      await dash.close();
    }
  });

  test("options: beyond loopback only with a token or insecureNoToken; an unknown key named", async () => {
    const { conn } = ctx();
    // 198.51.100.1 (a documentation address) is no interface of this machine: a start that gets
    // past the checks fails to bind (EADDRNOTAVAIL) and so listens nowhere.
    for (const host of ["198.51.100.1", "0.0.0.0", "::"]) {
      await assert.rejects(startDashboard(conn, { port: 0, host }), {
        name: "InvalidArgumentError",
        message: `invalid host: ${host} is not a loopback address, and without a token anyone who reaches it could use the dashboard (read every queue, and drain or remove its jobs): set a token (token, --token) or, knowingly, insecureNoToken: true (--insecure-no-token)`,
      });
    }
    for (const opts of [{ insecureNoToken: true }, { token: "remote-token-1" }]) {
      await assert.rejects(startDashboard(conn, { port: 0, host: "198.51.100.1", ...opts }), {
        code: "EADDRNOTAVAIL",
      });
    }
    const loopback = await startDashboard(conn, { port: 0, host: "localhost" });
    await loopback.close();
    await assert.rejects(startDashboard(conn, { port: 0, bogus: 1 } as never), {
      name: "InvalidArgumentError",
      message:
        "invalid bogus: not an option of startDashboard (its options: port, host, token, insecureNoToken, allowedHosts, readOnly, queues, sampleMs)",
    });
    await assert.rejects(startDashboard(conn, { port: 0, allowedHosts: ["evil.example:80"] }), {
      name: "InvalidArgumentError",
      message:
        'invalid allowedHosts: each must be a host name or an address, without scheme or port, got "evil.example:80"',
    });
    await assert.rejects(startDashboard(conn, { port: 0, insecureNoToken: "yes" } as never), {
      name: "InvalidArgumentError",
      message: 'invalid insecureNoToken: must be true or false, got "yes"',
    });
  });
});

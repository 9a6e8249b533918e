/**
 * Where the listeners listen: `serveMetrics` (the metrics server of the library) with the
 * dashboard's guard on both wires, and `echomq dashboard` (the built binary) refusing to listen
 * beyond loopback without `--token`, or starting with a warning under `--insecure-no-token`.
 *
 * No test listens beyond loopback: the address tried is 198.51.100.1, a documentation address
 * that is no interface here, so a start that gets past the checks fails to bind (EADDRNOTAVAIL).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Metrics, Queue, serveMetrics } from "../src/index.js";
import { assertBuilt, echomq, follow } from "./support/cli.js";
import { raw } from "./support/raw-http.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { forEachWire } from "./support/wires.js";

const NOWHERE = "198.51.100.1";

forEachWire("serveMetrics", (ctx) => {
  test("loopback by default; a foreign Host refused; the token asked; only GET /metrics", async () => {
    const { conn } = ctx();
    await new Queue("m-served", conn).addBulk([{ payload: "a" }, { payload: "b" }]);
    const metrics = new Metrics(conn, { queues: ["m-served"] });
    const served = await serveMetrics(metrics, { port: 0 });
    try {
      assert.match(served.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const { port } = new URL(served.url);
      const ok = await raw(served.url);
      assert.equal(ok.status, 200);
      assert.ok(ok.body.split("\n").includes('echomq_jobs{queue="m-served",state="pending"} 2'));
      const rebound = await raw(served.url, { headers: { host: `evil.example:${port}` } });
      assert.equal(rebound.status, 403);
      assert.equal(
        rebound.json.error,
        `refused: Host "evil.example:${port}" is not this metrics server's (a page of another site, rebound to this address?); reach it as localhost or by its address, or name the host in allowedHosts (--allow-host)`,
      );
      assert.ok(!rebound.body.includes("m-served"));
      const other = await raw(new URL("/", served.url).href);
      assert.equal(other.status, 404);
      assert.equal(other.json.error, "only GET /metrics is answered here, not GET /");
    } finally {
      await served.close();
    }
    const guarded = await serveMetrics(metrics, { port: 0, token: "scrape-token-9" });
    try {
      const bare = await raw(guarded.url);
      assert.equal(bare.status, 401);
      assert.equal(bare.json.error, "a token is required: send Authorization: Bearer <token>");
      const scraped = await raw(guarded.url, { headers: { authorization: "Bearer scrape-token-9" } });
      assert.equal(scraped.status, 200);
    } finally {
      await guarded.close();
    }
  });

  test("options: beyond loopback only with a token or insecureNoToken; an unknown key named", async () => {
    const { conn } = ctx();
    const metrics = new Metrics(conn, { queues: [] });
    for (const host of [NOWHERE, "0.0.0.0"]) {
      await assert.rejects(serveMetrics(metrics, { port: 0, host }), {
        name: "InvalidArgumentError",
        message: `invalid host: ${host} is not a loopback address, and without a token anyone who reaches it could use the metrics (every queue's name and counts): set a token (token, --token) or, knowingly, insecureNoToken: true (--insecure-no-token)`,
      });
    }
    for (const opts of [{ insecureNoToken: true }, { token: "scrape-token-9" }]) {
      await assert.rejects(serveMetrics(metrics, { port: 0, host: NOWHERE, ...opts }), {
        code: "EADDRNOTAVAIL",
      });
    }
    await assert.rejects(serveMetrics(metrics, { port: 0, path: "/m" } as never), {
      name: "InvalidArgumentError",
      message:
        "invalid path: not an option of serveMetrics (its options: port, host, token, insecureNoToken, allowedHosts)",
    });
  });
});

describe("echomq dashboard: where it listens", () => {
  let server: ValkeyServer;
  let url: string;
  before(async () => {
    assertBuilt();
    server = await startValkey();
    url = `redis://127.0.0.1:${server.port}`;
  });
  after(async () => {
    await server?.stop();
  });

  test("beyond loopback without --token: refused (exit 2), naming --token and --insecure-no-token", async () => {
    for (const host of [NOWHERE, "0.0.0.0"]) {
      const ran = await echomq(["dashboard", "--port", "0", "--host", host, "--url", url]);
      assert.equal(ran.code, 2, ran.stderr);
      assert.equal(
        ran.stderr.trim(),
        `echomq: invalid host: ${host} is not a loopback address, and without a token anyone who reaches it could use the dashboard (read every queue, and drain or remove its jobs): set a token (token, --token) or, knowingly, insecureNoToken: true (--insecure-no-token)`,
      );
    }
    const help = await echomq(["dashboard", "--help"]);
    assert.match(help.stdout, /--insecure-no-token/);
    assert.match(help.stdout, /--allow-host <name>/);
  });

  test("--insecure-no-token: past the check, with a warning; on loopback it serves", async () => {
    const ran = await echomq([
      "dashboard",
      "--port",
      "0",
      "--host",
      NOWHERE,
      "--insecure-no-token",
      "--url",
      url,
    ]);
    assert.match(
      ran.stderr,
      new RegExp(
        `^echomq dashboard: WARNING: --insecure-no-token: no token guards ${NOWHERE.replaceAll(".", "\\.")}; anyone who reaches the port reads every queue and can drain, clean or remove its jobs$`,
        "m",
      ),
    );
    assert.match(ran.stderr, /EADDRNOTAVAIL/, "it went on to listen");
    const served = follow([
      "dashboard",
      "--port",
      "0",
      "--allow-host",
      "dash.internal",
      "--json",
      "--url",
      url,
    ]);
    try {
      await served.until(() => served.lines.length >= 1, "the dashboard's URL");
      const page = new URL((JSON.parse(served.lines[0]!) as { url: string }).url);
      assert.equal(page.hostname, "127.0.0.1");
      const named = await raw(new URL("/api/config", page).href, { headers: { host: "dash.internal" } });
      assert.equal(named.status, 200);
      const rebound = await raw(new URL("/api/config", page).href, { headers: { host: "evil.example" } });
      assert.equal(rebound.status, 403);
      assert.equal(served.stderr(), "", "no warning on loopback");
    } finally {
      assert.equal(await served.stop(), 0);
    }
  });
});

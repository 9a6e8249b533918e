/**
 * connect(), optionsFromUrl() and installModuleBrand() at their edges: every bad option is a
 * typed error before a socket opens; refused credentials are an AuthError (not a fence refusal,
 * not "unreachable"); the brand installer honours TLS, the timeout and the database.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import {
  AuthError,
  ConnectionError,
  connect,
  InvalidArgumentError,
  Queue,
  VersionFenceError,
} from "../src/index.js";
import { InvalidQueueNameError } from "../src/errors.js";
import { installModuleBrand } from "../src/admin.js";
import { optionsFromUrl, queueKey } from "../src/protocol.js";
import type { KeyType } from "../src/keyspace.js";
import { freePort, startValkey, type ValkeyServer } from "./support/valkey.js";
import { V, WIRE6 } from "./support/module.js";

const invalid = (argument: string, pattern: RegExp) => (e: unknown) =>
  e instanceof InvalidArgumentError && e.argument === argument && pattern.test(e.message);

describe("connect(): options are checked before any socket opens", () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["port -1", { port: -1 }, "port", /must be an integer from 1 to 65535, got -1/],
    ["port 70000", { port: 70000 }, "port", /got 70000/],
    ["port 1.5", { port: 1.5 }, "port", /got 1.5/],
    ["port '6379'", { port: "6379" }, "port", /must be a number, got string "6379"/],
    ["connectTimeoutMs -1", { connectTimeoutMs: -1 }, "connectTimeoutMs", /from 1 to 2147483647, got -1/],
    ["connectTimeoutMs 2^31", { connectTimeoutMs: 2 ** 31 }, "connectTimeoutMs", /got 2147483648/],
    ["wire 5", { wire: 5 }, "wire", /must be 4 or 6, got 5/],
    ["db -1", { db: -1 }, "db", /got -1/],
    ["writeBatch 0", { writeBatch: 0 }, "writeBatch", /got 0/],
    ["host ''", { host: "" }, "host", /non-empty string/],
    ["password 42", { password: 42 }, "password", /must be a string, got number/],
  ];
  for (const [label, options, argument, pattern] of cases) {
    test(`${label} → InvalidArgumentError naming ${argument}`, async () => {
      await assert.rejects(connect(options as never), invalid(argument, pattern));
    });
  }

  test("queueKey with a non-string queue or type → typed errors, not TypeError", () => {
    assert.throws(
      () => queueKey(1 as unknown as string, "pending"),
      (e: unknown) => e instanceof InvalidQueueNameError && /a queue name must be a string/.test(e.message),
    );
    assert.throws(() => queueKey("q", null as unknown as KeyType), invalid("type", /must be a string/));
  });
});

describe("credentials", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ password: "s3cret" });
  });
  after(() => server.stop());

  test("no password on a protected node → AuthError (NOAUTH), not a fence refusal", async () => {
    await assert.rejects(
      connect({ port: server.port, connectTimeoutMs: 2000 }),
      (e: unknown) =>
        e instanceof AuthError &&
        !(e instanceof VersionFenceError) &&
        /^NOAUTH/.test(e.reply) &&
        e.message.includes(`127.0.0.1:${server.port} refused the credentials`),
    );
  });

  test("a wrong password → AuthError (WRONGPASS), not 'cannot reach'", async () => {
    const t0 = Date.now();
    await assert.rejects(
      connect({ port: server.port, password: "nope", connectTimeoutMs: 5000 }),
      (e: unknown) => e instanceof AuthError && /^WRONGPASS/.test(e.reply),
    );
    assert.ok(Date.now() - t0 < 4000, "a refusal is final at once, not retried until the timeout");
  });

  test("the right password connects; a database the server refuses is a ConnectionError naming db", async () => {
    const conn = await connect({ port: server.port, password: "s3cret" });
    await conn.close();
    await assert.rejects(
      connect({ port: server.port, password: "s3cret", db: 99 }),
      (e: unknown) =>
        e instanceof ConnectionError &&
        /refused SELECT 99 \(the db option\): ERR DB index is out of range/.test(e.message),
    );
  });
});

describe("queue names: one rule (1–255 bytes, no braces, no control characters)", () => {
  test("a 1 MB name, CR/LF, NUL, DEL, braces and the empty name are refused before anything is sent", async () => {
    const server = await startValkey();
    try {
      const conn = await connect({ port: server.port });
      for (const [name, why] of [
        ["x".repeat(1 << 20), /at most 255 bytes of UTF-8, got 1048576/],
        ["a\r\nb", /control character/],
        ["a\u0000b", /control character/],
        ["a\u007fb", /control character/],
        ["a{b", /'\{', '\}'/],
        ["", /must not be empty/],
        ["é".repeat(128), /at most 255 bytes of UTF-8, got 256/],
      ] as const) {
        assert.throws(
          () => new Queue(name, conn),
          (e: unknown) => e instanceof InvalidQueueNameError && why.test(e.message),
          JSON.stringify(name.slice(0, 10)),
        );
      }
      new Queue("é".repeat(127), conn); // 254 bytes: accepted
      assert.equal(await server.cli("DBSIZE"), 1, "only the brand key exists");
      await conn.close();
    } finally {
      await server.stop();
    }
  });
});

describe("optionsFromUrl", () => {
  test("host, port, user, password (percent-decoded), db, TLS by scheme", () => {
    assert.deepEqual(optionsFromUrl("redis://127.0.0.1:6390"), { host: "127.0.0.1", port: 6390 });
    assert.deepEqual(optionsFromUrl("valkey://al%40ce:p%3Ass@example.org/4"), {
      host: "example.org",
      port: 6379,
      username: "al@ce",
      password: "p:ss",
      db: 4,
    });
    assert.deepEqual(optionsFromUrl("rediss://h:7000"), { host: "h", port: 7000, tls: true });
    assert.deepEqual(optionsFromUrl("valkeys://h"), { host: "h", port: 6379, tls: true });
    assert.deepEqual(optionsFromUrl("redis://:pw@h"), { host: "h", port: 6379, password: "pw" });
  });
  for (const [url, pattern] of [
    ["not a url", /is not a URL/],
    ["http://h:1", /scheme must be redis:, rediss:, valkey: or valkeys:, got http:/],
    ["redis://h/abc", /database must be a number, got \/abc/],
  ] as const) {
    test(`${url} → InvalidArgumentError`, () => {
      assert.throws(() => optionsFromUrl(url), invalid("url", pattern));
    });
  }
});

describe("installModuleBrand", () => {
  let dir: string;
  let server: ValkeyServer;
  let tlsPort: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "emq-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    tlsPort = await freePort();
    server = await startValkey({
      module: modulePath(),
      extraArgs: [
        "--tls-port",
        String(tlsPort),
        "--tls-cert-file",
        join(dir, "cert.pem"),
        "--tls-key-file",
        join(dir, "key.pem"),
        "--tls-auth-clients",
        "no",
      ],
    });
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("over TLS, into the chosen database: 1, then 0; a wire-6 connection over TLS passes", async () => {
    const tls = { ca: readFileSync(join(dir, "cert.pem")) };
    assert.equal(await installModuleBrand({ port: tlsPort, tls, db: 2 }), 1);
    assert.equal(await installModuleBrand({ port: tlsPort, tls, db: 2 }), 0);
    assert.equal(await server.cli("EXISTS", V), 0, "db 0 holds no brand");
    const conn = await connect({ port: tlsPort, tls, db: 2, wire: 6 });
    assert.equal(String(await conn.send("GET", [V])), WIRE6);
    await conn.close();
    await assert.rejects(
      connect({ port: tlsPort, tls, wire: 6, connectTimeoutMs: 2000 }),
      (e: unknown) => e instanceof VersionFenceError && e.got === "absent",
      "db 0 was not branded",
    );
  });

  test("a database the server refuses → ConnectionError naming db; nothing written", async () => {
    await assert.rejects(
      installModuleBrand({ port: server.port, db: 99 }),
      (e: unknown) => e instanceof ConnectionError && /refused SELECT 99 \(the db option\)/.test(e.message),
    );
    assert.equal(await server.cli("EXISTS", V), 0);
  });

  test("a server that accepts and never answers → ConnectionError within the timeout", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const { port } = silent.address() as net.AddressInfo;
    const t0 = Date.now();
    try {
      await assert.rejects(
        installModuleBrand({ port, connectTimeoutMs: 300 }),
        (e: unknown) => e instanceof ConnectionError && e.message.includes(`127.0.0.1:${port}`),
      );
      assert.ok(Date.now() - t0 < 5000, "bounded by connectTimeoutMs, not a hang");
    } finally {
      silent.close();
    }
  });

  test("bad options → InvalidArgumentError before a socket opens", async () => {
    await assert.rejects(installModuleBrand({ port: 0 }), invalid("port", /got 0/));
  });
});

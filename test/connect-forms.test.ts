/**
 * connect() the way BullMQ users pass a connection, on real servers and both wires: ioredis'
 * option names under `connection` (password via `requirepass`, an ACL user, a database other
 * than 0, TLS with a CA), URLs (`connect(url)`, `url`, `connection: url`; redis://, rediss://,
 * valkey://), and an existing ioredis-style client whose options are carried over while its own
 * sockets stay unused (the fence holds: every socket that carries EchoMQ's commands is EchoMQ's).
 * What cannot be carried over is refused, typed, naming why and what to pass, before a socket
 * opens.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Redis } from "iovalkey";
import {
  AuthError,
  type Connection,
  type ConnectOptions,
  connect,
  InvalidArgumentError,
  Queue,
} from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { freePort } from "../tools/embedded-valkey.js";
import { modulePath } from "../tools/module-path.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { WIRES } from "./support/wires.js";

const PASSWORD = "s3cret";
const DB = 3;

const invalid = (argument: string, pattern: RegExp) => (e: unknown) =>
  e instanceof InvalidArgumentError && e.argument === argument && pattern.test(e.message);

/** A self-signed certificate for 127.0.0.1 in a new temp dir. */
function certificate(): string {
  const dir = mkdtempSync(join(tmpdir(), "emq-forms-tls-"));
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"],
      ...["-addext", "subjectAltName=IP:127.0.0.1"],
      ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
    ],
    { stdio: "ignore" },
  );
  return dir;
}

for (const wire of WIRES) {
  describe(`connect(): BullMQ's connection forms [wire ${wire}]`, () => {
    let server: ValkeyServer;
    let dir: string;
    let tlsPort: number;
    const opened: Connection[] = [];
    const open = async (options: string | ConnectOptions) => {
      const conn = await connect(typeof options === "string" ? options : { wire, ...options });
      opened.push(conn);
      return conn;
    };
    /** Adds a job over `conn`, and says which databases hold it (read over plain options). */
    async function landsIn(conn: Connection): Promise<number[]> {
      const { id } = await new Queue("forms", conn).add("p");
      const found: number[] = [];
      for (const db of [0, DB]) {
        const reader = await open({ port: server.port, password: PASSWORD, db });
        if ((await new Queue("forms", reader).getJob(id)) !== null) found.push(db);
      }
      return found;
    }

    before(async () => {
      dir = certificate();
      tlsPort = await freePort();
      server = await startValkey({
        password: PASSWORD,
        acl: ["user alice on >wonder ~* &* +@all"],
        ...(wire === 6 ? { module: modulePath() } : {}),
        extraArgs: [
          ...["--tls-port", String(tlsPort), "--tls-auth-clients", "no"],
          ...["--tls-cert-file", join(dir, "cert.pem"), "--tls-key-file", join(dir, "key.pem")],
        ],
      });
      if (wire === 6) {
        // installModuleBrand takes the same forms: a URL, and BullMQ's connection object.
        await installModuleBrand(`redis://:${PASSWORD}@127.0.0.1:${server.port}`);
        await installModuleBrand({ connection: { port: server.port, password: PASSWORD, db: DB } });
      }
    });
    after(async () => {
      for (const conn of opened) await conn.close();
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test("connection: { host, port, password, db } — the job lands in that database", async () => {
      const conn = await open({
        connection: { host: "127.0.0.1", port: server.port, password: PASSWORD, db: DB },
      });
      assert.deepEqual(await landsIn(conn), [DB]);
    });

    test("URLs: connect(url), { url }, { connection: url }; redis:// and valkey://, the db in the path", async () => {
      const at = `127.0.0.1:${server.port}`;
      const forms: [string | ConnectOptions, number[]][] = [
        [`redis://:${PASSWORD}@${at}/${DB}`, [DB]],
        [{ url: `valkey://default:${PASSWORD}@${at}/${DB}` }, [DB]],
        [{ connection: `redis://default:${PASSWORD}@${at}` }, [0]],
      ];
      for (const [form, expected] of forms) {
        // The string form takes the wire from the node's brand only on wire 4 (the default).
        if (typeof form === "string" && wire === 6) continue;
        assert.deepEqual(await landsIn(await open(form)), expected, JSON.stringify(form));
      }
    });

    test("an ACL user (username + password); a wrong password is an AuthError", async () => {
      const conn = await open({ connection: { port: server.port, username: "alice", password: "wonder" } });
      assert.deepEqual(await landsIn(conn), [0]);
      await assert.rejects(
        open({ connection: `redis://alice:nope@127.0.0.1:${server.port}` }),
        (e: unknown) => e instanceof AuthError && /^WRONGPASS/.test(e.reply),
      );
    });

    test("TLS: rediss:// with the CA beside it, and connection: { tls: { ca } }", async () => {
      const ca = readFileSync(join(dir, "cert.pem"));
      const viaUrl = await open({ url: `rediss://:${PASSWORD}@127.0.0.1:${tlsPort}/${DB}`, tls: { ca } });
      assert.deepEqual(await landsIn(viaUrl), [DB]);
      const viaObject = await open({ connection: { port: tlsPort, password: PASSWORD, tls: { ca } } });
      assert.deepEqual(await landsIn(viaObject), [0]);
    });

    test("an existing client: its options carried over, its own socket never opened", async () => {
      const client = new Redis({
        port: server.port,
        password: PASSWORD,
        db: DB,
        connectionName: "billing-app",
        lazyConnect: true,
      });
      const conn = await open({ connection: client });
      assert.deepEqual(await landsIn(conn), [DB]);
      assert.equal(client.status, "wait", "the client's socket was never opened");
      const list = String(await server.cli("CLIENT", "LIST"));
      assert.match(list, / name=billing-app /, "the client's name carried over to EchoMQ's sockets");
    });

    test("what cannot be carried over is refused, typed, before a socket opens", async () => {
      const before = String(await server.cli("DBSIZE"));
      const port = server.port;
      const lazy = (o: object) => new Redis({ port, lazyConnect: true, ...o });
      const cases: [ConnectOptions, string, RegExp][] = [
        [{ connection: lazy({ keyPrefix: "app:" }) }, "connection", /has a keyPrefix: the keyspace is fixed/],
        [
          { connection: lazy({ path: "/tmp/valkey.sock" }) },
          "connection",
          /Unix socket: pass \{ host, port \}/,
        ],
        [
          { connection: { port, maxRetriesPerRequest: null } as never },
          "connection.maxRetriesPerRequest",
          /\(ioredis's name\): EchoMQ's connection reconnects by itself.*leave it out/,
        ],
        [{ connection: { port, keyPrefix: "x" } as never }, "connection.keyPrefix", /the keyspace is fixed/],
        [{ connection: { port }, host: "127.0.0.1" }, "connection", /give it or host, not both/],
        [{ url: `redis://127.0.0.1:${port}`, port }, "url", /give it or port, not both/],
        [
          { url: `redis://127.0.0.1:${port}`, connection: { port } },
          "url",
          /give url or connection, not both/,
        ],
        [{ url: "http://127.0.0.1" }, "url", /scheme must be redis:, rediss:, valkey: or valkeys:/],
      ];
      for (const [options, argument, message] of cases) {
        await assert.rejects(
          connect({ wire, ...options }),
          invalid(argument, message),
          JSON.stringify(argument),
        );
      }
      assert.equal(String(await server.cli("DBSIZE")), before, "nothing written");
    });
  });
}

/**
 * Messages a user can act on: a server refusal met by a `Queue` or `Job` method says it in that
 * call's words (the server's text stays as `reply`, the host step's error as `cause`); refused
 * credentials, an endpoint that is not Valkey and a server that cannot be reached say what
 * happened and what to do, in the library and in the CLI.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  AuthError,
  connect,
  JobActiveError,
  JobNotDeadError,
  JobNotFoundError,
  JobNotScheduledError,
  Queue,
  ServerUnreachableError,
} from "../src/index.js";
import { NotValkeyError } from "../src/errors.js";
import { claim } from "../src/protocol.js";
import { assertBuilt, echomq } from "./support/cli.js";
import { freePort, startValkey, type ValkeyServer } from "./support/valkey.js";
import { forEachWire } from "./support/wires.js";

forEachWire("refusals in the words of the call", (ctx) => {
  test("promote / retry / remove of a job in the wrong state, and of no job: typed, in the call's words, the server's text kept", async () => {
    const { conn } = ctx();
    const q = new Queue("words", conn);
    const { id } = await q.add("x");
    await assert.rejects(q.promote(id), (e: unknown) => {
      assert.ok(e instanceof JobNotScheduledError, String(e));
      assert.equal(e.message, `promote(${id}): job ${id} is not scheduled (it is pending)`);
      assert.equal(e.reply, "ERR EMQ.EXPEDITE job is not scheduled");
      assert.ok(e.cause instanceof JobNotScheduledError);
      assert.equal((e.cause as Error).message, "ERR EMQ.EXPEDITE job is not scheduled");
      return true;
    });
    await assert.rejects(q.retry(id), (e: unknown) => {
      assert.ok(e instanceof JobNotDeadError, String(e));
      assert.equal(
        e.message,
        `retry(${id}): job ${id} is not dead (it is pending): only a dead job can be retried`,
      );
      assert.equal(e.reply, "ERR EMQ.RETRY job is not dead");
      return true;
    });
    const missing = "JOB00000000009";
    await assert.rejects(q.promote(missing), (e: unknown) => {
      assert.ok(e instanceof JobNotFoundError, String(e));
      assert.equal(e.message, `promote(${missing}): no job ${missing} in queue "words"`);
      return true;
    });
    const held = await claim(conn, "words", 30_000);
    assert.equal(held?.id, id);
    await assert.rejects(q.remove(id), (e: unknown) => {
      assert.ok(e instanceof JobActiveError, String(e));
      assert.equal(
        e.message,
        `remove(${id}): job ${id} is active (a worker holds its lease): remove it once it has finished`,
      );
      assert.equal(e.reply, "ERR EMQ.REMOVE job is active");
      return true;
    });
  });
});

describe("connect(): credentials, an endpoint that is not Valkey, a server that is down", () => {
  let server: ValkeyServer;
  before(async () => {
    assertBuilt();
    server = await startValkey({ password: "right" });
  });
  after(() => server?.stop());

  test("refused credentials: one period, the connect() options named; the CLI names --url instead", async () => {
    await assert.rejects(connect({ port: server.port, password: "wrong" }), (e: unknown) => {
      assert.ok(e instanceof AuthError, String(e));
      assert.doesNotMatch(e.message, /\.\./);
      assert.match(e.message, /^valkey at 127\.0\.0\.1:\d+ refused the credentials \(WRONGPASS [^)]*\)/);
      assert.match(e.message, /connect\(\)'s username and password options/);
      return true;
    });
    const ran = await echomq(["status", "--url", `redis://:wrong@127.0.0.1:${server.port}`]);
    assert.equal(ran.code, 3);
    assert.doesNotMatch(ran.stderr, /\.\.|connect\(\)/);
    assert.match(ran.stderr, /refused the credentials \(WRONGPASS/);
    assert.match(ran.stderr, /--url redis:\/\/user:password@host:port/);
  });

  test("an HTTP server: NotValkeyError quoting what it sent, not a RESP parser's byte offset", async () => {
    const web = http.createServer((_req, res) => res.end("hello"));
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
    const { port } = web.address() as AddressInfo;
    try {
      await assert.rejects(connect({ port }), (e: unknown) => {
        assert.ok(e instanceof NotValkeyError, String(e));
        assert.match(
          e.message,
          new RegExp(
            `^the server at 127\\.0\\.0\\.1:${port} did not answer as Valkey \\(it sent "HTTP/1\\.1 `,
          ),
        );
        assert.doesNotMatch(e.message, /unexpected byte|0x48/);
        return true;
      });
    } finally {
      web.close();
    }
  });

  test("nothing listening: ServerUnreachableError saying refused and tried once, no timeout it did not wait for", async () => {
    const port = await freePort();
    await assert.rejects(connect({ port }), (e: unknown) => {
      assert.ok(e instanceof ServerUnreachableError, String(e));
      assert.equal(e.tries, 1);
      assert.match(
        e.message,
        new RegExp(`^cannot reach valkey at 127\\.0\\.0\\.1:${port}: connection refused`),
      );
      assert.match(e.message, /tried once in \d+ ms/);
      assert.doesNotMatch(e.message, /5000/);
      return true;
    });
  });
});

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { AuthError, ConnectionError, ConnectionLostError, connect, VersionFenceError } from "../src/index.js";
import { claim, enqueue, newId, scriptFor } from "../src/protocol.js";
import { fenceWire4 } from "../src/engine/fence.js";
import { RawSession } from "../src/resp.js";
import net from "node:net";
import { freePort, startValkey, type ValkeyServer } from "./support/valkey.js";
import { startProxy, type FaultProxy } from "./support/proxy.js";
import { monitor } from "./support/monitor.js";
import { V, WIRE4, WIRE6 } from "./support/module.js";

describe("wire-4 connector: the fence table (docs/protocol.md, the version fence, wire-4 column)", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey();
  });
  after(() => server.stop());
  beforeEach(() => server.cli("FLUSHALL", "SYNC"));

  test("absent → claims it with SET NX and passes", async () => {
    const conn = await connect({ port: server.port });
    assert.equal(String(await server.cli("GET", V)), WIRE4);
    await conn.close();
  });

  test(`${WIRE4} → passes and writes nothing`, async () => {
    await server.cli("SET", V, WIRE4);
    const mon = await monitor(server.port);
    const conn = await connect({ port: server.port });
    await conn.send("PING", []);
    await conn.close();
    await mon.stop();
    const writes = mon.commands().filter((c) => c[0]?.toUpperCase() === "SET");
    assert.deepEqual(writes, []);
  });

  for (const [brand, label] of [
    [WIRE6, "the module's brand"],
    ["something-else", "any other string"],
  ] as const) {
    test(`${label} (${brand}) → VersionFenceError carrying got`, async () => {
      await server.cli("SET", V, brand);
      await assert.rejects(
        connect({ port: server.port }),
        (err: unknown) => err instanceof VersionFenceError && err.got === brand && err.expected === WIRE4,
      );
      assert.equal(String(await server.cli("GET", V)), brand, "the fence never overwrites a brand");
    });
  }

  test(`a non-string value at ${V} → VersionFenceError, not a retry loop`, async () => {
    await server.cli("HSET", V, "a", "b");
    const t0 = Date.now();
    await assert.rejects(connect({ port: server.port }), VersionFenceError);
    assert.ok(Date.now() - t0 < 2000);
  });

  test("a concurrent module brand written between GET and SET NX wins; the connector fails its fence", async () => {
    // Drive the fence on a raw socket and let another writer brand the node right after the GET.
    const socket = net.connect({ port: server.port, host: "127.0.0.1" });
    await new Promise((r) => socket.once("connect", r));
    const session = new RawSession(socket);
    let raced = false;
    const send = async (args: readonly (string | number)[]) => {
      if (args[0] === "SET" && !raced) {
        raced = true;
        await server.cli("SET", V, WIRE6, "NX");
      }
      return session.send(args);
    };
    await assert.rejects(fenceWire4(send), (e: unknown) => e instanceof VersionFenceError && e.got === WIRE6);
    assert.equal(raced, true);
    assert.equal(String(await server.cli("GET", V)), WIRE6);
    session.detach();
    socket.destroy();
  });

  test("racing another writer on an absent key: exactly one brand stands and only its side passes", async () => {
    for (let round = 0; round < 20; round++) {
      await server.cli("FLUSHALL", "SYNC");
      const [conn, other] = await Promise.allSettled([
        connect({ port: server.port }),
        server.cli("SET", V, WIRE6, "NX"),
      ]);
      const brand = String(await server.cli("GET", V));
      assert.ok(brand === WIRE4 || brand === WIRE6);
      if (brand === WIRE4) {
        assert.equal(conn.status, "fulfilled");
        assert.equal(
          other.status === "fulfilled" ? other.value : "x",
          null,
          "the other writer's SET NX did nothing",
        );
      } else {
        assert.equal(conn.status, "rejected");
        assert.ok(conn.status === "rejected" && conn.reason instanceof VersionFenceError);
      }
      if (conn.status === "fulfilled") await conn.value.close();
    }
  });
});

describe("wire-4 connector: reconnects, in-flight commands, NOSCRIPT", () => {
  let server: ValkeyServer;
  let proxy: FaultProxy;
  before(async () => {
    server = await startValkey();
  });
  after(() => server.stop());
  beforeEach(async () => {
    await server.cli("FLUSHALL", "SYNC");
    await proxy?.close();
    proxy = await startProxy({ targetPort: server.port });
  });

  test(`brand switched to ${WIRE6} while the proxy cuts: the reconnect fails its fence and no application command reaches the server`, async () => {
    const conn = await connect({ port: proxy.port });
    await enqueue(conn, "q", "before");
    await server.cli("SET", V, WIRE6);
    const mark = proxy.mark();
    const closed = new Promise((r) => conn.client.once("close", r));
    proxy.cut();
    await closed; // the client has seen the cut: the next call waits for the reconnect's fence
    const pending = enqueue(conn, "q", "after");
    await assert.rejects(pending, VersionFenceError);
    await assert.rejects(enqueue(conn, "q", "later"), VersionFenceError, "the connector stays stopped");
    const sent = proxy.since(mark, true).map((c) => c.args.map(String));
    assert.ok(sent.length > 0, "the reconnect ran its fence");
    for (const args of sent)
      assert.ok(
        ["EMQ.VERSION", `GET ${V}`].includes(args.join(" ")),
        `only the fence's reads reached the server, saw ${args.join(" ")}`,
      );
    assert.equal(await server.cli("ZCARD", "emq:{q}:pending"), 1);
    await conn.close();
  });

  test("a command in flight at a cut fails with ConnectionLostError and is never re-sent", async () => {
    const conn = await connect({ port: proxy.port });
    assert.equal(conn.fencedSockets, 1);
    const id = newId();
    const swallowed = proxy.swallowNext((args) => args[0]?.toUpperCase() === "EVALSHA");
    await assert.rejects(enqueue(conn, "q", "x", { id }), ConnectionLostError);
    await swallowed;
    // The connection recovers on a new, fenced socket; the lost command was not replayed.
    const next = await enqueue(conn, "q", "y");
    assert.equal(next.duplicate, false);
    assert.equal(conn.fencedSockets, 2);
    assert.equal(await server.cli("EXISTS", `emq:{q}:job:${id}`), 0);
    const forwarded = proxy.commands.filter((c) => c.forwarded && c.args.includes(id));
    assert.deepEqual(forwarded, []);
    await conn.close();
  });

  test("calls made while reconnections are refused fail with a typed error, then the connection recovers", async () => {
    const conn = await connect({ port: proxy.port });
    const refused = proxy.refuse(400);
    proxy.cut();
    await assert.rejects(enqueue(conn, "q", "x"), (e: unknown) => e instanceof ConnectionLostError);
    await refused;
    await new Promise((r) => setTimeout(r, 300));
    const ok = await enqueue(conn, "q", "after");
    assert.equal(ok.duplicate, false);
    await conn.close();
  });

  test("NOSCRIPT after SCRIPT FLUSH: the source is loaded once and the same line re-sent; the reply is unchanged", async () => {
    const conn = await connect({ port: server.port });
    const a = newId();
    const b = newId();
    assert.deepEqual(await enqueue(conn, "q", "p", { id: a }), { id: a, duplicate: false });
    await server.cli("SCRIPT", "FLUSH");
    const mon = await monitor(server.port);
    assert.deepEqual(await enqueue(conn, "q", "p", { id: b }), { id: b, duplicate: false });
    assert.deepEqual(await enqueue(conn, "q", "p", { id: b }), { id: b, duplicate: true });
    await conn.send("ECHO", ["sentinel"]);
    await mon.waitFor((e) => e.args[0]?.toUpperCase() === "ECHO");
    await mon.stop();
    const seen = mon.commands().filter((c) => ["EVALSHA", "SCRIPT", "EVAL"].includes(c[0]!.toUpperCase()));
    assert.deepEqual(
      seen.map(
        (c) => c[0]!.toUpperCase() + (c[0]!.toUpperCase() === "SCRIPT" ? ` ${c[1]!.toUpperCase()}` : ""),
      ),
      ["EVALSHA", "SCRIPT LOAD", "EVALSHA", "EVALSHA"],
    );
    assert.equal(seen[0]![1], scriptFor("ENQUEUE").sha1);
    assert.deepEqual(seen[0], seen[2], "the same line is re-sent after the load");
    assert.ok(!seen.some((c) => c[0]!.toUpperCase() === "EVAL"));
    await conn.close();
  });

  test("many calls meeting NOSCRIPT at once load the script once", async () => {
    const conn = await connect({ port: server.port });
    await server.cli("SCRIPT", "FLUSH");
    await server.cli("CONFIG", "RESETSTAT");
    const results = await Promise.all(Array.from({ length: 100 }, () => enqueue(conn, "q", "x")));
    assert.equal(results.filter((r) => !r.duplicate).length, 100);
    const stats = String(await server.cli("INFO", "commandstats"));
    assert.equal(/cmdstat_script\|load:calls=(\d+)/.exec(stats)?.[1], "1");
    await conn.close();
  });

  test("close() ends cleanly: later calls fail with ConnectionError, nothing reconnects", async () => {
    const conn = await connect({ port: proxy.port });
    await enqueue(conn, "q", "x");
    await conn.close();
    const accepted = proxy.stats.accepted;
    await assert.rejects(enqueue(conn, "q", "y"), ConnectionError);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(proxy.stats.accepted, accepted);
    assert.equal(conn.client.status, "end");
  });
});

describe("wire-4 connector: boot commands and reachability", () => {
  test("an unreachable server fails within the bound, naming host and port", async () => {
    const port = await freePort();
    const t0 = Date.now();
    await assert.rejects(
      connect({ port, connectTimeoutMs: 800 }),
      (e: unknown) => e instanceof ConnectionError && e.message.includes(`127.0.0.1:${port}`),
    );
    assert.ok(Date.now() - t0 < 2000, "bounded, not a hang");
  });

  test("AUTH with username, SELECT and CLIENT SETNAME run before the fence on every socket", async () => {
    const server = await startValkey({ acl: ["user alice on >s3cret ~* &* +@all"] });
    try {
      const conn = await connect({
        port: server.port,
        username: "alice",
        password: "s3cret",
        db: 3,
        name: "emq-test",
      });
      await enqueue(conn, "q", "x");
      assert.equal(await server.cli("SELECT", "3"), "OK");
      const list = String(await conn.send("CLIENT", ["LIST"]));
      assert.match(list, /name=emq-test .*user=alice/);
      const db3 = await conn.send("DBSIZE", []);
      assert.ok(Number(db3) >= 2, "keys were written in db 3");
      await conn.close();
      await assert.rejects(
        connect({ port: server.port, username: "alice", password: "wrong", connectTimeoutMs: 600 }),
        (e: unknown) => e instanceof AuthError && e.code === "EMQ_AUTH" && /^WRONGPASS/.test(e.reply),
      );
    } finally {
      await server.stop();
    }
  });

  test("claim on the same connection after recovery still works (keys unchanged by the cut)", async () => {
    const server = await startValkey();
    try {
      const conn = await connect({ port: server.port });
      await enqueue(conn, "q", "x");
      const job = await claim(conn, "q", 1000);
      assert.ok(job);
      await conn.close();
    } finally {
      await server.stop();
    }
  });
});

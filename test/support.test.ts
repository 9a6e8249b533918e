import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { type FaultProxy, readCommandFrame, startProxy } from "./support/proxy.js";
import { encodeCommand } from "../src/resp.js";
import { monitor, parseMonitorLine } from "./support/monitor.js";
import { connectResp, rawCommand, rawCommands } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { until } from "./support/until.js";

/** True while `pid` runs; a zombie (killed, not yet reaped by its new parent) counts as gone. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  return !(existsSync(stat) && / Z /.test(readFileSync(stat, "utf8")));
}

describe("resp helpers", () => {
  test("readCommandFrame handles arrays, partial input and inline commands", () => {
    const bytes = Buffer.concat([encodeCommand(["SET", "k", "v"]), encodeCommand(["GET", "k"])]);
    const first = readCommandFrame(bytes, 0);
    assert.deepEqual(first?.args.map(String), ["SET", "k", "v"]);
    const second = readCommandFrame(bytes, first?.end ?? 0);
    assert.deepEqual(second?.args.map(String), ["GET", "k"]);
    assert.equal(second?.end, bytes.length);
    for (let cut = 1; cut < 20; cut++) assert.equal(readCommandFrame(bytes.subarray(0, cut), 0), null);
    assert.deepEqual(readCommandFrame(Buffer.from("PING  hello\r\n"), 0)?.args.map(String), [
      "PING",
      "hello",
    ]);
  });

  test("parseMonitorLine unescapes arguments", () => {
    const entry = parseMonitorLine('1700000000.123456 [0 127.0.0.1:5555] "SET" "a \\"b\\"" "\\x00\\n"');
    assert.deepEqual(entry?.args, ["SET", 'a "b"', "\x00\n"]);
    assert.equal(entry?.client, "127.0.0.1:5555");
    assert.equal(parseMonitorLine("OK"), null);
  });
});

describe("startValkey", () => {
  test("starts, answers, stops: pid gone and dir removed", async () => {
    const server = await startValkey();
    assert.equal(server.host, "127.0.0.1");
    assert.ok(isAlive(server.pid));
    assert.ok(existsSync(server.dir));
    assert.equal(server.url, `redis://127.0.0.1:${server.port}`);
    assert.equal(await server.cli("PING"), "PONG");
    assert.equal(await server.cli("SET", "k", Buffer.from("v")), "OK");
    assert.equal(await server.cli("GET", "k"), "v");
    assert.deepEqual(await rawCommand(server.port, ["GET", "k"], { returnBuffers: true }), Buffer.from("v"));
    await assert.rejects(server.cli("NOSUCHCOMMAND"), /unknown command/);
    const [exec] = await rawCommands(server.port, [["EVAL", "return redis.error_reply('boom')", 0]]);
    assert.ok(exec instanceof Error && /boom/.test(exec.message));
    assert.equal(await server.cli("CONFIG", "GET", "appendonly").then(String), "appendonly,no");
    const pid = server.pid;
    await server.stop();
    assert.equal(isAlive(pid), false);
    assert.equal(existsSync(server.dir), false);
    await server.stop(); // idempotent
  });

  test("aof: writes appendonlydir and survives restart on the same port", async () => {
    const server = await startValkey({ aof: true });
    try {
      await server.cli("SET", "durable", "yes");
      assert.ok(existsSync(`${server.dir}/appendonlydir`));
      const [port, pid] = [server.port, server.pid];
      await server.restart();
      assert.equal(server.port, port);
      assert.notEqual(server.pid, pid);
      assert.equal(isAlive(pid), false);
      assert.equal(await server.cli("GET", "durable"), "yes");
    } finally {
      await server.stop();
    }
  });

  test("crash: SIGKILL keeps the dir; restart reloads what the AOF holds", async () => {
    const server = await startValkey({ aof: true });
    try {
      await server.cli("SET", "acknowledged", "yes");
      const [port, pid] = [server.port, server.pid];
      await server.crash();
      assert.equal(isAlive(pid), false);
      assert.ok(existsSync(`${server.dir}/appendonlydir`));
      await server.crash(); // idempotent on a dead process
      await server.restart();
      assert.equal(server.port, port);
      assert.notEqual(server.pid, pid);
      assert.equal(await server.cli("GET", "acknowledged"), "yes");
      assert.doesNotMatch(server.logTail(200), /Saving the final RDB|ready to exit/);
    } finally {
      await server.stop();
    }
  });

  test("module: a bogus module path rejects with a clear error and cleans up", async () => {
    const err = await startValkey({ module: "/nonexistent/echomq-bogus.so" }).then(
      () => assert.fail("startValkey should reject"),
      (e: unknown) => e as Error,
    );
    assert.match(err.message, /failed to start/);
    assert.match(err.message, /echomq-bogus\.so/);
    assert.match(err.message, /Module .* failed to load|exited with code/);
  });

  test("acl: a user works within its keys and is refused outside them", async () => {
    const server = await startValkey({ acl: ["user alice on >pw ~emq:{a}:* +@all"] });
    try {
      const alice = { user: "alice", password: "pw" };
      assert.equal(await rawCommand(server.port, ["SET", "emq:{a}:x", "1"], alice), "OK");
      await assert.rejects(rawCommand(server.port, ["SET", "other", "1"], alice), /NOPERM/);
      await assert.rejects(
        rawCommand(server.port, ["PING"], { user: "alice", password: "nope" }),
        /WRONGPASS/,
      );
      assert.equal(await server.cli("GET", "emq:{a}:x"), "1");
    } finally {
      await server.stop();
    }
  });

  test("password: cli authenticates, anonymous clients are refused", async () => {
    const server = await startValkey({ password: "s3cret" });
    try {
      assert.equal(await server.cli("PING"), "PONG");
      await assert.rejects(rawCommand(server.port, ["GET", "x"]), /NOAUTH/);
      assert.equal(server.url, `redis://:s3cret@127.0.0.1:${server.port}`);
    } finally {
      await server.stop();
    }
  });

  test("cluster: cluster_state:ok and CLUSTER KEYSLOT answers", async () => {
    const server = await startValkey({ cluster: true });
    try {
      assert.match(String(await server.cli("CLUSTER", "INFO")), /cluster_state:ok/);
      assert.equal(await server.cli("CLUSTER", "KEYSLOT", "foo"), 12182);
      assert.equal(await server.cli("SET", "emq:{a}:x", "1"), "OK");
      assert.ok(existsSync(`${server.dir}/nodes.conf`));
    } finally {
      await server.stop();
    }
  });

  test("replicaOf: the replica is synced when start resolves", async () => {
    const primary = await startValkey();
    const replica = await startValkey({ replicaOf: { host: primary.host, port: primary.port } });
    try {
      await primary.cli("SET", "r", "1");
      await until("replication of r", async () => (await replica.cli("GET", "r")) === "1");
    } finally {
      await replica.stop();
      await primary.stop();
    }
  });

  test("servers left running are killed when the test process exits", async () => {
    const script = [
      `import { startValkey } from ${JSON.stringify(new URL("./support/valkey.ts", import.meta.url).href)};`,
      "const s = await startValkey();",
      "console.log(s.pid);",
      "process.exit(0);",
    ].join("\n");
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      timeout: 15_000,
    });
    const pid = Number(stdout.trim());
    assert.ok(pid > 0, `child printed a pid: ${stdout}`);
    await until(`pid ${pid} to be gone`, () => !isAlive(pid));
  });
});

describe("fault proxy", () => {
  let server: ValkeyServer;
  let proxy: FaultProxy;

  before(async () => {
    server = await startValkey();
    proxy = await startProxy({ targetPort: server.port });
  });
  after(async () => {
    await proxy.close();
    await server.stop();
  });

  test("forwards both ways and logs commands per connection, pipelined or split", async () => {
    const mark = proxy.mark();
    const conn = await connectResp(proxy.port);
    try {
      assert.equal(await conn.send(["SET", "p", "1"]), "OK");
      const pipelined = Buffer.concat([encodeCommand(["INCR", "p"]), encodeCommand(["GET", "p"])]);
      for (let i = 0; i < pipelined.length; i += 3) {
        conn.sendRaw(pipelined.subarray(i, i + 3));
        await sleep(1);
      }
      await until("two pipelined replies", () => conn.unsolicited.length === 2);
      assert.deepEqual(conn.unsolicited, [2, "2"]);
      const seen = proxy.since(mark);
      assert.deepEqual(
        seen.map((c) => c.args),
        [
          ["SET", "p", "1"],
          ["INCR", "p"],
          ["GET", "p"],
        ],
      );
      const index = seen[0]?.conn ?? -1;
      assert.ok(seen.every((c) => c.conn === index && c.forwarded));
      assert.deepEqual(proxy.commandsOf(index), [
        ["SET", "p", "1"],
        ["INCR", "p"],
        ["GET", "p"],
      ]);
    } finally {
      await conn.close();
    }
  });

  test("cut() drops current clients; new connections work", async () => {
    const conn = await connectResp(proxy.port);
    assert.equal(await conn.send(["PING"]), "PONG");
    proxy.cut();
    await conn.closed;
    await assert.rejects(conn.send(["PING"]), /closed/);
    assert.equal(await rawCommand(proxy.port, ["PING"]), "PONG");
  });

  test("refuse(ms) closes new connections for a while, then accepts", async () => {
    const refusedBefore = proxy.stats.refused;
    const window = proxy.refuse(300);
    await assert.rejects(rawCommand(proxy.port, ["PING"], { timeoutMs: 1000 }), /closed|reset|ECONN/);
    assert.equal(proxy.stats.refused, refusedBefore + 1);
    await window;
    assert.equal(await rawCommand(proxy.port, ["PING"]), "PONG");
  });

  test("swallowNext: the command never reaches the server and the connection is cut", async () => {
    const watch = await monitor(server.port);
    try {
      const conn = await connectResp(proxy.port);
      assert.equal(await conn.send(["SET", "before", "1"]), "OK");
      const swallowed = proxy.swallowNext((args) => args[0] === "SET" && args[1] === "swallowed", {
        cutAfterMs: 50,
      });
      const reply = conn.send(["SET", "swallowed", "1"]);
      const after = conn.send(["SET", "afterwards", "1"]);
      await assert.rejects(reply, /closed before the reply/);
      await assert.rejects(after, /closed before the reply/);
      const command = await swallowed;
      assert.deepEqual(command.args, ["SET", "swallowed", "1"]);
      assert.equal(command.forwarded, false);
      assert.equal(conn.isClosed, true);

      await server.cli("ECHO", "sentinel");
      await watch.waitFor((e) => e.args[0] === "ECHO" && e.args[1] === "sentinel");
      const keys = watch.commands().map((args) => args[1]);
      assert.ok(keys.includes("before"));
      assert.ok(!keys.includes("swallowed"), "the swallowed SET reached the server");
      assert.ok(!keys.includes("afterwards"), "a command after the swallowed one reached the server");
      assert.equal(await server.cli("EXISTS", "swallowed"), 0);
      const logged = proxy.since(command.seq, true).map((c) => [c.args[1], c.forwarded]);
      assert.deepEqual(logged, [
        ["swallowed", false],
        ["afterwards", false],
      ]);
    } finally {
      await watch.stop();
    }
  });
});

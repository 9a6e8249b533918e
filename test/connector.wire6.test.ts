/**
 * The wire-6 connector against real servers: its fence (docs/protocol.md, the version fence, wire-6 column) writes nothing,
 * job-core scripts go out as `EMQ.<VERB>` with the EVALSHA line's tail, `read` scripts go as
 * EVALSHA, undeclared scripts never leave the host, and every reconnect re-runs the fence.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { connect, type Connection, VersionFenceError } from "../src/index.js";
import { claim, enqueue, newId, Script, scriptFor, SCRIPTS, WireRefusalError } from "../src/protocol.js";
import { installModuleBrand } from "../src/admin.js";
import { type FaultProxy, startProxy } from "./support/proxy.js";
import { type MonitorEntry, type MonitorHandle, monitor } from "./support/monitor.js";
import { rawCommand } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { V, WIRE4, WIRE6 } from "./support/module.js";

/** The verbs the module under test implements and these tests drive. */
const VERBS = ["ENQUEUE", "CLAIM"];

const lower = (args: readonly string[]) => args.map((a, i) => (i === 0 ? a.toLowerCase() : a));

/** The server's dirty counter: it moves on every write. */
async function dirty(port: number): Promise<number> {
  const info = String(await rawCommand(port, ["INFO", "persistence"]));
  const m = /^rdb_changes_since_last_save:(\d+)/m.exec(info);
  assert.ok(m);
  return Number(m[1]);
}

/** Commands clients sent (not the module's inner calls, not Lua's), up to the ECHO `sentinel`. */
async function clientCommands(mon: MonitorHandle, sentinel: string): Promise<string[][]> {
  const isSentinel = (e: MonitorEntry) => e.args[0]?.toLowerCase() === "echo" && e.args[1] === sentinel;
  await mon.waitFor(isSentinel);
  const out: string[][] = [];
  for (const e of mon.entries()) {
    if (isSentinel(e)) break;
    if (e.client !== "" && e.client !== "lua") out.push(e.args);
  }
  return out;
}

async function resetTo(server: ValkeyServer, brand: string | null): Promise<void> {
  await server.cli("FLUSHALL", "SYNC");
  if (brand !== null) await server.cli("SET", V, brand);
}

describe("wire-6 connector: the fence (docs/protocol.md, the version fence, wire-6 column)", () => {
  let mod: ValkeyServer;
  let plain: ValkeyServer;
  before(async () => {
    [mod, plain] = await Promise.all([startValkey({ module: modulePath() }), startValkey()]);
  });
  after(async () => {
    await Promise.all([mod.stop(), plain.stop()]);
  });
  beforeEach(() => resetTo(mod, null));

  /** connect({wire: 6}) must reject with VersionFenceError, fast, writing nothing. */
  async function refused(
    server: ValkeyServer,
    check: (e: VersionFenceError) => void,
    requiredVerbs: readonly string[] = VERBS,
  ): Promise<void> {
    const brand = await server.cli("DUMP", V);
    const d0 = await dirty(server.port);
    const t0 = Date.now();
    await assert.rejects(connect({ port: server.port, wire: 6, requiredVerbs }), (e: unknown) => {
      assert.ok(e instanceof VersionFenceError, `got ${String(e)}`);
      assert.equal(e.expected, WIRE6);
      check(e);
      return true;
    });
    assert.ok(Date.now() - t0 < 2000, "final, not retried");
    assert.deepEqual(await server.cli("DUMP", V), brand, "the brand is unchanged");
    assert.equal(await dirty(server.port), d0, "nothing was written");
  }

  test(`a module node branded ${WIRE4} → VersionFenceError (got ${WIRE4})`, async () => {
    await resetTo(mod, WIRE4);
    await refused(mod, (e) => assert.equal(e.got, WIRE4));
  });

  test("an unbranded module node → VersionFenceError (got absent); the key stays absent", async () => {
    await refused(mod, (e) => assert.equal(e.got, "absent"));
    assert.equal(await mod.cli("EXISTS", V), 0);
  });

  test("another string → VersionFenceError carrying it", async () => {
    await resetTo(mod, "acme:1");
    await refused(mod, (e) => assert.equal(e.got, "acme:1"));
  });

  test("a non-string brand → VersionFenceError", async () => {
    await mod.cli("HSET", V, "a", "b");
    await refused(mod, (e) => assert.equal(e.got, "a value that is not a string"));
  });

  test("a plain node without the module → VersionFenceError (got no module), even when branded for wire 4", async () => {
    await resetTo(plain, null);
    await refused(plain, (e) => assert.equal(e.got, "no module"));
    assert.equal(await plain.cli("EXISTS", V), 0);
    await plain.cli("SET", V, WIRE4);
    await refused(plain, (e) => assert.equal(e.got, "no module"));
  });

  test("a module that lacks a required verb → VersionFenceError naming it; the same node passes without it", async () => {
    await resetTo(mod, WIRE6);
    const version = ((await mod.cli("EMQ.VERSION")) as unknown[])[3];
    await refused(
      mod,
      (e) => {
        assert.equal(e.got, `module ${String(version)}`);
        assert.match(e.message, /lacks verbs NOPE\b/);
        assert.doesNotMatch(e.message, /lacks verbs .*(ENQUEUE|CLAIM)/);
      },
      ["ENQUEUE", "CLAIM", "NOPE"],
    );
    const conn = await connect({ port: mod.port, wire: 6, requiredVerbs: ["ENQUEUE", "CLAIM"] });
    assert.equal(conn.wire, 6);
    assert.equal(conn.fencedSockets, 1);
    await conn.close();
  });

  test(`${WIRE6} passes and the connect writes nothing: only EMQ.VERSION and GET reach the server`, async () => {
    await resetTo(mod, WIRE6);
    const d0 = await dirty(mod.port);
    const mon = await monitor(mod.port);
    const conn = await connect({ port: mod.port, wire: 6, requiredVerbs: VERBS });
    await conn.send("ECHO", ["connected"]);
    const sent = await clientCommands(mon, "connected");
    await mon.stop();
    await conn.close();
    assert.deepEqual(sent.map(lower), [["emq.version"], ["get", V]]);
    assert.equal(await dirty(mod.port), d0, "no write during connect");
    assert.equal(String(await mod.cli("GET", V)), WIRE6);
  });

  test("an unbranded module node: the refused connect sent no write (no SET, no EMQ.INSTALL)", async () => {
    const mon = await monitor(mod.port);
    await assert.rejects(connect({ port: mod.port, wire: 6, requiredVerbs: VERBS }), VersionFenceError);
    await rawCommand(mod.port, ["ECHO", "done"]);
    const sent = await clientCommands(mon, "done");
    await mon.stop();
    assert.deepEqual(sent.map(lower), [["emq.version"], ["get", V]]);
  });
});

describe("wire-6 connector: what goes on the wire", () => {
  let plain: ValkeyServer;
  let mod: ValkeyServer;
  let c4: Connection;
  let c6: Connection;
  before(async () => {
    [plain, mod] = await Promise.all([startValkey(), startValkey({ module: modulePath() })]);
    assert.equal(await installModuleBrand({ port: mod.port }), 1);
    c4 = await connect({ port: plain.port });
    c6 = await connect({ port: mod.port, wire: 6, requiredVerbs: VERBS });
    // Load the scripts on the wire-4 node so each call is one EVALSHA (no NOSCRIPT round).
    for (const s of [...SCRIPTS.values()]) await c4.send("SCRIPT", ["LOAD", s.source]);
  });
  after(async () => {
    await c4.close();
    await c6.close();
    await Promise.all([plain.stop(), mod.stop()]);
  });

  test("the head swap: EMQ.ENQUEUE 2 … / EMQ.CLAIM 3 … with the EVALSHA line's tail", async () => {
    const [m4, m6] = await Promise.all([monitor(plain.port), monitor(mod.port)]);
    const id = newId();
    const q = "swap:q";
    assert.deepEqual(await enqueue(c4, q, "hello world", { id }), { id, duplicate: false });
    assert.deepEqual(await enqueue(c6, q, "hello world", { id }), { id, duplicate: false });
    const j4 = await claim(c4, q, 15_000);
    const j6 = await claim(c6, q, 15_000);
    assert.equal(j4?.id, id);
    assert.equal(j6?.id, id);
    await c4.send("ECHO", ["end4"]);
    await c6.send("ECHO", ["end6"]);
    const sent4 = await clientCommands(m4, "end4");
    const sent6 = await clientCommands(m6, "end6");
    await Promise.all([m4.stop(), m6.stop()]);

    const evalsha = sent4.filter((a) => a[0]?.toLowerCase() === "evalsha");
    const native = sent6.filter((a) => a[0]?.toLowerCase().startsWith("emq."));
    assert.equal(evalsha.length, 2, JSON.stringify(sent4));
    assert.equal(native.length, 2, JSON.stringify(sent6));
    const [e4, c4line] = evalsha as [string[], string[]];
    const [e6, c6line] = native as [string[], string[]];
    assert.equal(e4[1], scriptFor("ENQUEUE").sha1);
    assert.equal(c4line[1], scriptFor("CLAIM").sha1);
    assert.deepEqual(lower(e6), [
      "emq.enqueue",
      "2",
      `emq:{${q}}:job:${id}`,
      `emq:{${q}}:pending`,
      id,
      "hello world",
    ]);
    assert.deepEqual(lower(c6line), [
      "emq.claim",
      "3",
      `emq:{${q}}:pending`,
      `emq:{${q}}:active`,
      `emq:{${q}}:`,
      "15000",
    ]);
    assert.deepEqual(e6.slice(1), e4.slice(2), "enqueue: same tail");
    assert.deepEqual(c6line.slice(1), c4line.slice(2), "claim: same tail");
    assert.ok(
      !sent6.some((a) => ["evalsha", "eval", "script"].includes(a[0]!.toLowerCase())),
      "no Lua reaches the module node",
    );
    // The host's pause read precedes the claim on both wires.
    for (const [sent, line] of [
      [sent4, c4line],
      [sent6, c6line],
    ] as const) {
      const before = sent[sent.indexOf(line) - 1];
      assert.deepEqual(lower(before ?? []), ["hget", `emq:{${q}}:meta`, "paused"]);
    }
  });

  test("a script declaring read goes as EVALSHA on wire 6", async () => {
    const probe = new Script("probe", "return 1", "read");
    const mon = await monitor(mod.port);
    assert.equal(await c6.eval(probe, [], []), 1);
    assert.equal(await c6.eval(probe, [], []), 1);
    await c6.send("ECHO", ["read-done"]);
    const sent = await clientCommands(mon, "read-done");
    await mon.stop();
    const shas = sent.filter((a) => a[0]?.toLowerCase() === "evalsha");
    assert.ok(shas.length >= 2, JSON.stringify(sent));
    for (const line of shas) assert.deepEqual(line.slice(1), [probe.sha1, "0"]);
    assert.ok(!sent.some((a) => a[0]!.toLowerCase().startsWith("emq.")));
  });

  test("a script declaring neither → WireRefusalError, nothing sent", async () => {
    const proxy: FaultProxy = await startProxy({ targetPort: mod.port });
    const conn = await connect({ port: proxy.port, wire: 6, requiredVerbs: VERBS });
    const write = new Script("probe-write", "return redis.call('SET', KEYS[1], ARGV[1])", null);
    const mon = await monitor(mod.port);
    const mark = proxy.mark();
    await assert.rejects(conn.eval(write, ["scratch"], ["x"]), (e: unknown) => {
      assert.ok(e instanceof WireRefusalError, String(e));
      assert.match(e.message, /probe-write/);
      return true;
    });
    await conn.send("ECHO", ["after-refusal"]);
    const sent = await clientCommands(mon, "after-refusal");
    await mon.stop();
    assert.deepEqual(
      proxy.since(mark, true).map((c) => lower(c.args)),
      [["echo", "after-refusal"]],
      "only the sentinel left the host",
    );
    assert.deepEqual(sent, [], "nothing reached the server before the sentinel");
    assert.equal(await mod.cli("EXISTS", "scratch"), 0);
    await conn.close();
    await proxy.close();
  });
});

describe("wire-6 connector: reconnects re-run the wire-6 fence", () => {
  let server: ValkeyServer;
  let proxy: FaultProxy;
  before(async () => {
    server = await startValkey({ module: modulePath() });
    assert.equal(await installModuleBrand({ port: server.port }), 1);
    proxy = await startProxy({ targetPort: server.port });
  });
  after(async () => {
    await proxy.close();
    await server.stop();
  });

  test(`a cut → the new socket runs EMQ.VERSION + GET first; brand switched to ${WIRE4} → the reconnect fails with VersionFenceError`, async () => {
    const conn = await connect({ port: proxy.port, wire: 6, requiredVerbs: VERBS });
    await enqueue(conn, "r", "one");
    assert.equal(conn.fencedSockets, 1);

    // Same brand: the reconnect passes its fence before anything else is sent.
    let mark = proxy.mark();
    let closed = new Promise((r) => conn.client.once("close", r));
    proxy.cut();
    await closed;
    await enqueue(conn, "r", "two");
    assert.equal(conn.fencedSockets, 2);
    const resent = proxy.since(mark).map((c) => lower(c.args));
    assert.deepEqual(resent.slice(0, 2), [["emq.version"], ["get", V]], JSON.stringify(resent));
    assert.equal(resent[2]?.[0], "emq.enqueue");

    // Brand switched behind the connector's back.
    await server.cli("SET", V, WIRE4);
    mark = proxy.mark();
    closed = new Promise((r) => conn.client.once("close", r));
    proxy.cut();
    await closed;
    await assert.rejects(enqueue(conn, "r", "three"), (e: unknown) => {
      assert.ok(e instanceof VersionFenceError, String(e));
      assert.equal(e.got, WIRE4);
      return true;
    });
    await assert.rejects(enqueue(conn, "r", "four"), VersionFenceError, "the connector stays stopped");
    const sent = proxy.since(mark, true).map((c) => lower(c.args));
    assert.ok(sent.length >= 2, "the reconnect ran its fence");
    for (const args of sent) {
      assert.ok(
        JSON.stringify(args) === JSON.stringify(["emq.version"]) ||
          JSON.stringify(args) === JSON.stringify(["get", V]),
        `only the fence's reads reached the server, saw ${args.join(" ")}`,
      );
    }
    assert.equal(String(await server.cli("GET", V)), WIRE4, "the wire-6 fence wrote nothing");
    assert.equal(await server.cli("ZCARD", "emq:{r}:pending"), 2);
    await conn.close();
  });
});

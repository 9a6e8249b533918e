/**
 * The native module against real valkey-server processes: the native fence, EMQ.INSTALL, the pause
 * difference (D2), EMQ.VERSION and ACLs (the fence reads as the calling client). The order of
 * refusals: module.refusals.test.ts; keyspace equality with the Lua scripts (wire 4):
 * module.equality.test.ts; AOF and replication: module.replication.test.ts; the write guard:
 * module.guard.test.ts.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, beforeEach, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { connect, ServerError, VersionFenceError } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { claim, enqueue, scriptFor } from "../src/protocol.js";
import type { RespArg } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import {
  assertRefusedUnchanged,
  call,
  chunk,
  claimArgs,
  claimKeys,
  dirty,
  dumpAll,
  enqueueArgs,
  ID_A,
  ID_B,
  JOB_CORE,
  k,
  LAYOUT,
  refusalOf,
  resetTo,
  row,
  seedJob,
  serverMs,
  V,
  VERBS,
  WIRE4,
  WIRE6,
  WRONGTYPE,
} from "./support/module.js";

/* ------------------------------------------------------------------ one module server */

describe("module: fence, install, pause, EMQ.VERSION", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ module: modulePath() });
  });
  after(() => server.stop());
  beforeEach(() => resetTo(server, null));

  describe("native fence (docs/protocol.md, the version fence, native column)", () => {
    const refused: [string, string | null, string][] = [
      ["absent", null, `EMQWIRE expected ${WIRE6} found (nil)`],
      ["the scripts' brand", WIRE4, `EMQWIRE expected ${WIRE6} found ${WIRE4}`],
      ["another string", "acme:1", `EMQWIRE expected ${WIRE6} found acme:1`],
      ["the brand with a trailing space", `${WIRE6} `, `EMQWIRE expected ${WIRE6} found ${WIRE6} `],
      ["an empty string", "", `EMQWIRE expected ${WIRE6} found `],
    ];
    for (const [label, brand, text] of refused) {
      test(`${label} → ${text}; EMQ.ENQUEUE and EMQ.CLAIM write nothing`, async () => {
        await resetTo(server, brand);
        await seedJob(server.port, "q", ID_A);
        await assertRefusedUnchanged(server.port, enqueueArgs("q", ID_B), text);
        await assertRefusedUnchanged(server.port, claimArgs("q"), text);
        assert.equal(await server.cli("EXISTS", V), brand === null ? 0 : 1, "the fence never writes a brand");
      });
    }

    test(`${WIRE6} passes: EMQ.ENQUEUE writes the row and the id, EMQ.CLAIM leases the head`, async () => {
      await resetTo(server, WIRE6);
      await seedJob(server.port, "q", ID_A, "first");
      assert.equal(await call(server.port, enqueueArgs("q", ID_B, "second")), 1);
      assert.deepEqual((await dumpAll(server.port))[row("q", ID_B)], {
        type: "hash",
        value: { state: "pending", attempts: "0", payload: "second" },
      });
      const t0 = await serverMs(server.port);
      const reply = (await call(server.port, claimArgs("q", 5000))) as [string, string, number, number];
      const t1 = await serverMs(server.port);
      assert.deepEqual(reply.slice(0, 3), [ID_A, "first", 1]);
      assert.ok(
        reply[3] >= t0 + 5000 && reply[3] <= t1 + 5000,
        `deadline ${reply[3]} in [${t0}, ${t1}] + 5000`,
      );
      assert.equal(Number(await server.cli("ZSCORE", k("q", "active"), ID_A)), reply[3]);
      assert.deepEqual(await server.cli("ZRANGE", k("q", "pending"), 0, -1), [ID_B]);
      assert.equal(String(await server.cli("HGET", row("q", ID_A), "state")), "active");
      assert.equal(await call(server.port, enqueueArgs("q", ID_B, "again")), 0, "duplicate id → 0");
    });
  });

  describe("EMQ.INSTALL", () => {
    const install: RespArg[] = ["EMQ.INSTALL", 1, V];

    test(`absent → 1 and writes ${WIRE6}`, async () => {
      const d0 = await dirty(server.port);
      assert.equal(await call(server.port, install), 1);
      assert.equal(String(await server.cli("GET", V)), WIRE6);
      assert.equal(await dirty(server.port), d0 + 1, "one write");
    });

    test(`already ${WIRE6} → 0, writes nothing`, async () => {
      await resetTo(server, WIRE6);
      const before = await dumpAll(server.port);
      const d0 = await dirty(server.port);
      assert.equal(await call(server.port, install), 0);
      assert.deepEqual(await dumpAll(server.port), before);
      assert.equal(await dirty(server.port), d0, "no write, not even the same value");
    });

    for (const brand of [WIRE4, "acme:1"]) {
      test(`another string (${brand}) → EMQWIRE, unchanged`, async () => {
        await resetTo(server, brand);
        await assertRefusedUnchanged(server.port, install, `EMQWIRE expected ${WIRE6} found ${brand}`);
        assert.equal(String(await server.cli("GET", V)), brand);
      });
    }

    for (const [label, write] of [
      ["a hash", ["HSET", V, "a", "b"]],
      ["a list", ["RPUSH", V, "x"]],
      ["a sorted set", ["ZADD", V, "1", "m"]],
    ] as const) {
      test(`not a string (${label}) → the server's WRONGTYPE text, unchanged`, async () => {
        await server.cli(...write);
        await assertRefusedUnchanged(server.port, install, WRONGTYPE);
      });
    }

    const shapes: [string, RespArg[], string][] = [
      ["no numkeys", ["EMQ.INSTALL"], "keys"],
      ["numkeys 0", ["EMQ.INSTALL", 0], "keys"],
      ["numkeys 2", ["EMQ.INSTALL", 2, V, "x"], "keys"],
      ["numkeys not a number", ["EMQ.INSTALL", "one", V], "keys"],
      ["numkeys beyond the arguments", ["EMQ.INSTALL", 1], "keys"],
      ["a value", ["EMQ.INSTALL", 1, V, WIRE6], "values"],
    ];
    for (const [label, args, which] of shapes) {
      test(`shape: ${label} → wrong number of ${which}, nothing written`, async () => {
        await assertRefusedUnchanged(
          server.port,
          args,
          `ERR EMQ.INSTALL wrong number of ${which}: EMQ.INSTALL 1 ${V}`,
        );
        assert.equal(await server.cli("EXISTS", V), 0);
      });
    }

    for (const key of [`${V}x`, "emq:version", "{EMQ}:version", `${V} `, "emq:{q}:pending"]) {
      test(`layout: key ${JSON.stringify(key)} → the layout error, nothing written`, async () => {
        await assertRefusedUnchanged(server.port, ["EMQ.INSTALL", 1, key], LAYOUT("INSTALL"));
        assert.equal(await server.cli("EXISTS", V), 0);
      });
    }
  });

  describe("pause (declared difference D2)", () => {
    test("paused=1: EMQ.CLAIM → empty array, nothing written; EVAL claim.lua on the same state claims", async () => {
      await resetTo(server, WIRE6);
      assert.equal(await call(server.port, enqueueArgs("q", ID_A, "job")), 1);
      await server.cli("HSET", k("q", "meta"), "paused", "1");
      const before = await dumpAll(server.port);
      const d0 = await dirty(server.port);
      assert.deepEqual(await call(server.port, claimArgs("q")), []);
      assert.deepEqual(await dumpAll(server.port), before);
      assert.equal(await dirty(server.port), d0);

      const reply = (await call(server.port, [
        "EVAL",
        scriptFor("CLAIM").source,
        3,
        ...claimKeys("q"),
        30000,
      ])) as [string, string, number, number];
      assert.deepEqual(reply.slice(0, 3), [ID_A, "job", 1], "the script claims a paused queue");
      assert.equal(String(await server.cli("HGET", row("q", ID_A), "state")), "active");
      assert.equal(await server.cli("ZCARD", k("q", "pending")), 0);
      assert.equal(Number(await server.cli("ZSCORE", k("q", "active"), ID_A)), reply[3]);
    });

    test("paused=0 is not paused: EMQ.CLAIM claims", async () => {
      await resetTo(server, WIRE6);
      assert.equal(await call(server.port, enqueueArgs("q", ID_A, "job")), 1);
      await server.cli("HSET", k("q", "meta"), "paused", "0");
      const reply = (await call(server.port, claimArgs("q"))) as unknown[];
      assert.deepEqual(reply.slice(0, 3), [ID_A, "job", 1]);
    });
  });

  describe("EMQ.VERSION", () => {
    test("reply shape: wire, module (major 0, the crate's version), verbs, extensions, features", async () => {
      const d0 = await dirty(server.port);
      const reply = (await call(server.port, ["EMQ.VERSION"])) as unknown[];
      assert.ok(Array.isArray(reply) && reply.length === 10, JSON.stringify(reply));
      const [wKey, wire, mKey, version, vKey, verbs, xKey, extensions, fKey, features] = reply;
      assert.deepEqual(
        [wKey, wire, mKey, vKey, xKey, fKey],
        ["wire", WIRE6, "module", "verbs", "extensions", "features"],
      );
      assert.deepEqual(extensions, ["BCLAIM"]);
      assert.deepEqual(features, ["timers"], "the server-side timers (on by default)");
      const cargo = readFileSync(new URL("../module/Cargo.toml", import.meta.url), "utf8");
      const crate = /^version\s*=\s*"([^"]+)"/m.exec(cargo)?.[1];
      assert.equal(version, crate, "the module version is the crate's");
      assert.match(String(version), /^0\.\d+\.\d+$/);
      assert.ok(Array.isArray(verbs));
      const tokens = verbs as string[];
      assert.equal(new Set(tokens).size, tokens.length, "no duplicate tokens");
      for (const t of tokens) assert.ok(JOB_CORE.includes(t), `${t} is a job-core verb token`);
      for (const t of VERBS) assert.ok(tokens.includes(t), `lists ${t}`);
      // Every listed verb is a command of this node.
      for (const t of tokens) {
        const info = (await call(server.port, ["COMMAND", "INFO", `emq.${t.toLowerCase()}`])) as unknown[];
        assert.ok(Array.isArray(info[0]), `EMQ.${t} is a command`);
      }
      assert.equal(await dirty(server.port), d0, "EMQ.VERSION writes nothing");
      assert.equal(await server.cli("EXISTS", V), 0, "and needs no brand");
    });

    test("any argument → the arity error", async () => {
      assert.equal(
        refusalOf(await call(server.port, ["EMQ.VERSION", "x"])),
        "ERR wrong number of arguments for 'emq.version' command",
      );
    });
  });
});

/* ------------------------------------------------------------------ ACL */

describe("ACL: the fence reads as the calling client", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({
      module: modulePath(),
      acl: [`user u on >pw ~emq:{a}:* %R~${V} +@all`, "user n on >pw ~emq:{a}:* +@all"],
    });
    assert.equal(await installModuleBrand({ port: server.port }), 1);
  });
  after(() => server.stop());

  test("a user limited to queue a: works on a, NOPERM on b (wire-6 connector)", async () => {
    const conn = await connect({
      port: server.port,
      username: "u",
      password: "pw",
      wire: 6,
      requiredVerbs: VERBS,
    });
    const { id } = await enqueue(conn, "a", "ok");
    const job = await claim(conn, "a", 10_000);
    assert.equal(job?.id, id);
    assert.equal(String(await server.cli("HGET", row("a", id), "state")), "active");

    const before = await dumpAll(server.port);
    const noperm = (e: unknown) => e instanceof ServerError && /^NOPERM/.test(e.reply);
    await assert.rejects(enqueue(conn, "b", "no"), noperm);
    await assert.rejects(claim(conn, "b", 10_000), noperm);
    await seedJob(server.port, "b", ID_A);
    const seeded = await dumpAll(server.port);
    await assert.rejects(conn.eval(scriptFor("CLAIM"), claimKeys("b"), [10_000]), noperm);
    await assert.rejects(
      conn.eval(scriptFor("ENQUEUE"), [row("b", ID_B), k("b", "pending")], [ID_B, "x"]),
      noperm,
    );
    assert.deepEqual(await dumpAll(server.port), seeded, "nothing written on b");
    assert.ok(!Object.keys(before).some((key) => key.includes("{b}")));
    await conn.close();
  });

  test(`a user who cannot read ${V}: the raw verb passes the NOPERM through; connect({wire:6}) → VersionFenceError`, async () => {
    const auth = { user: "n", password: "pw" };
    const own = refusalOf(await call(server.port, ["GET", V], auth));
    assert.match(own, /^NOPERM/);
    await seedJob(server.port, "a", ID_B, "seeded");
    await assertRefusedUnchanged(server.port, enqueueArgs("a", ID_A), own, auth);
    await assertRefusedUnchanged(server.port, claimArgs("a"), own, auth);
    // The fence's denial is in ACL LOG (context "module"), as the server logs a GET's.
    const log = (await server.cli("ACL", "LOG")) as unknown[][];
    const entry = log
      .map((e) => new Map(chunk(e.map(String))))
      .find((e) => e.get("username") === "n" && e.get("context") === "module");
    assert.equal(entry?.get("reason"), "key");
    assert.equal(entry?.get("object"), V);
    await assert.rejects(
      connect({ port: server.port, username: "n", password: "pw", wire: 6, requiredVerbs: VERBS }),
      (e: unknown) => e instanceof VersionFenceError && e.expected === WIRE6 && /NOPERM/.test(e.message),
    );
    assert.equal(String(await server.cli("GET", V)), WIRE6);
  });
});

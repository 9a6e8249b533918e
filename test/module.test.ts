/**
 * The native module against real valkey-server processes: the native fence, EMQ.INSTALL, the
 * order of refusals (shape → layout → fence), keyspace equality with the Lua scripts (wire 4),
 * AOF and replication, ACLs, the pause difference (D2) and EMQ.VERSION. The write guard:
 * module.guard.test.ts.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { connect, installModuleBrand, newId, ServerError, VersionFenceError } from "../src/index.js";
import { scriptFor, claim, enqueue } from "../src/protocol.js";
import { type RespArg, type RespReply, rawCommands } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import {
  assertRefusedUnchanged,
  call,
  chunk,
  CLAIM_FORM,
  claimArgs,
  claimKeys,
  dirty,
  dumpAll,
  ENQUEUE_FORM,
  enqueueArgs,
  ID_A,
  ID_B,
  JOB_CORE,
  k,
  LAYOUT,
  refusalOf,
  replicated,
  resetTo,
  row,
  runId,
  seedJob,
  serverMs,
  V,
  VERBS,
  WIRE4,
  WIRE6,
  WRONGTYPE,
} from "./support/module.js";

/* ------------------------------------------------------------------ one module server */

describe("module: fence, install, refusals, pause, EMQ.VERSION", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ module: modulePath() });
  });
  after(() => server.stop());
  beforeEach(() => resetTo(server, null));

  describe("native fence (docs/protocol.md, the version fence, native column)", () => {
    const refused: [string, string | null, string][] = [
      ["absent", null, "EMQWIRE expected echomq:6.0.0 found (nil)"],
      ["the scripts' brand", WIRE4, "EMQWIRE expected echomq:6.0.0 found echomq:4.0.0"],
      ["another string", "acme:1", "EMQWIRE expected echomq:6.0.0 found acme:1"],
      ["the brand with a trailing space", `${WIRE6} `, `EMQWIRE expected echomq:6.0.0 found ${WIRE6} `],
      ["an empty string", "", "EMQWIRE expected echomq:6.0.0 found "],
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

    test("echomq:6.0.0 passes: EMQ.ENQUEUE writes the row and the id, EMQ.CLAIM leases the head", async () => {
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

    test("absent → 1 and writes echomq:6.0.0", async () => {
      const d0 = await dirty(server.port);
      assert.equal(await call(server.port, install), 1);
      assert.equal(String(await server.cli("GET", V)), WIRE6);
      assert.equal(await dirty(server.port), d0 + 1, "one write");
    });

    test("already echomq:6.0.0 → 0, writes nothing", async () => {
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
        await assertRefusedUnchanged(server.port, install, `EMQWIRE expected echomq:6.0.0 found ${brand}`);
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
          `ERR EMQ.INSTALL wrong number of ${which}: EMQ.INSTALL 1 {emq}:version`,
        );
        assert.equal(await server.cli("EXISTS", V), 0);
      });
    }

    for (const key of [
      "{emq}:versionx",
      "emq:version",
      "{EMQ}:version",
      "{emq}:version ",
      "emq:{q}:pending",
    ]) {
      test(`layout: key ${JSON.stringify(key)} → the layout error, nothing written`, async () => {
        await assertRefusedUnchanged(server.port, ["EMQ.INSTALL", 1, key], LAYOUT("INSTALL"));
        assert.equal(await server.cli("EXISTS", V), 0);
      });
    }
  });

  describe("order of refusals: shape → layout → fence (exact texts, nothing written)", () => {
    // Every queue a refused call could touch holds a claimable job, so a refusal that let the call
    // through would change the dump.
    const LONG = "q".repeat(256);
    const QUEUES = ["a", "b", "", "a{b", "a\u0000b", "a}b", "a\tb", "a\u007fb", LONG];
    const seedAll = async () => {
      for (const q of QUEUES) await seedJob(server.port, q, ID_A);
    };

    const enqueueLayout: [string, RespArg[]][] = [
      ["pending without emq:{", ["EMQ.ENQUEUE", 2, row("a", ID_A), "emx:{a}:pending", ID_A, "p"]],
      ["pending upper-case prefix", ["EMQ.ENQUEUE", 2, row("a", ID_A), "EMQ:{a}:pending", ID_A, "p"]],
      ["pending without braces", ["EMQ.ENQUEUE", 2, "emq:a:job:" + ID_A, "emq:a:pending", ID_A, "p"]],
      ["pending without }:", ["EMQ.ENQUEUE", 2, row("a", ID_A), "emq:{a}pending", ID_A, "p"]],
      ["pending cut after the name", ["EMQ.ENQUEUE", 2, row("a", ID_A), "emq:{a", ID_A, "p"]],
      ["{ in the name", ["EMQ.ENQUEUE", 2, row("a{b", ID_A), k("a{b", "pending"), ID_A, "p"]],
      ["} in the name", ["EMQ.ENQUEUE", 2, row("a}b", ID_A), k("a}b", "pending"), ID_A, "p"]],
      ["NUL in the name", ["EMQ.ENQUEUE", 2, row("a\u0000b", ID_A), k("a\u0000b", "pending"), ID_A, "p"]],
      ["empty name", ["EMQ.ENQUEUE", 2, row("", ID_A), k("", "pending"), ID_A, "p"]],
      ["TAB in the name", ["EMQ.ENQUEUE", 2, row("a\tb", ID_A), k("a\tb", "pending"), ID_A, "p"]],
      [
        "DEL (0x7F) in the name",
        ["EMQ.ENQUEUE", 2, row("a\u007fb", ID_A), k("a\u007fb", "pending"), ID_A, "p"],
      ],
      ["a name of 256 bytes", ["EMQ.ENQUEUE", 2, row(LONG, ID_A), k(LONG, "pending"), ID_A, "p"]],
      ["anchor of another type (active)", ["EMQ.ENQUEUE", 2, row("a", ID_A), k("a", "active"), ID_A, "p"]],
      ["anchor with trailing bytes", ["EMQ.ENQUEUE", 2, row("a", ID_A), k("a", "pending "), ID_A, "p"]],
      ["row of another type (meta)", ["EMQ.ENQUEUE", 2, k("a", "meta"), k("a", "pending"), ID_A, "p"]],
      ["row for another queue", ["EMQ.ENQUEUE", 2, row("b", ID_A), k("a", "pending"), ID_A, "p"]],
      ["row for another id", ["EMQ.ENQUEUE", 2, row("a", ID_B), k("a", "pending"), ID_A, "p"]],
      ["keys swapped", ["EMQ.ENQUEUE", 2, k("a", "pending"), row("a", ID_A), ID_A, "p"]],
    ];
    const claimLayout: [string, RespArg[]][] = [
      ["pending without emq:{", ["EMQ.CLAIM", 3, "emx:{a}:pending", k("a", "active"), k("a", ""), 1000]],
      ["pending without braces", ["EMQ.CLAIM", 3, "emq:a:pending", "emq:a:active", "emq:a:", 1000]],
      ["pending without }:", ["EMQ.CLAIM", 3, "emq:{a}pending", k("a", "active"), k("a", ""), 1000]],
      ["{ in the name", ["EMQ.CLAIM", 3, ...claimKeys("a{b"), 1000]],
      ["} in the name", ["EMQ.CLAIM", 3, ...claimKeys("a}b"), 1000]],
      ["NUL in the name", ["EMQ.CLAIM", 3, ...claimKeys("a\u0000b"), 1000]],
      ["empty name", ["EMQ.CLAIM", 3, ...claimKeys(""), 1000]],
      ["TAB in the name", ["EMQ.CLAIM", 3, ...claimKeys("a\tb"), 1000]],
      ["DEL (0x7F) in the name", ["EMQ.CLAIM", 3, ...claimKeys("a\u007fb"), 1000]],
      ["a name of 256 bytes", ["EMQ.CLAIM", 3, ...claimKeys(LONG), 1000]],
      [
        "anchor of another type (schedule)",
        ["EMQ.CLAIM", 3, k("a", "schedule"), k("a", "active"), k("a", ""), 1000],
      ],
      [
        "active of another type (done)",
        ["EMQ.CLAIM", 3, k("a", "pending"), k("a", "done"), k("a", ""), 1000],
      ],
      [
        "base of another type (meta)",
        ["EMQ.CLAIM", 3, k("a", "pending"), k("a", "active"), k("a", "meta"), 1000],
      ],
      ["base without its colon", ["EMQ.CLAIM", 3, k("a", "pending"), k("a", "active"), "emq:{a}", 1000]],
      ["active for another queue", ["EMQ.CLAIM", 3, k("a", "pending"), k("b", "active"), k("a", ""), 1000]],
      ["base for another queue", ["EMQ.CLAIM", 3, k("a", "pending"), k("a", "active"), k("b", ""), 1000]],
      ["keys rotated", ["EMQ.CLAIM", 3, k("a", "active"), k("a", ""), k("a", "pending"), 1000]],
    ];

    const enqueueKeys = `ERR EMQ.ENQUEUE wrong number of keys: ${ENQUEUE_FORM}`;
    const enqueueValues = `ERR EMQ.ENQUEUE wrong number of values: ${ENQUEUE_FORM}`;
    const claimKeysText = `ERR EMQ.CLAIM wrong number of keys: ${CLAIM_FORM}`;
    const claimValues = `ERR EMQ.CLAIM wrong number of values: ${CLAIM_FORM}`;
    const shapes: [string, RespArg[], string][] = [
      ["ENQUEUE without arguments", ["EMQ.ENQUEUE"], enqueueKeys],
      ["ENQUEUE numkeys 1", ["EMQ.ENQUEUE", 1, row("a", ID_A), k("a", "pending"), ID_A, "p"], enqueueKeys],
      ["ENQUEUE numkeys 3", ["EMQ.ENQUEUE", 3, row("a", ID_A), k("a", "pending"), ID_A, "p"], enqueueKeys],
      [
        "ENQUEUE numkeys not a number",
        ["EMQ.ENQUEUE", "two", row("a", ID_A), k("a", "pending"), ID_A, "p"],
        enqueueKeys,
      ],
      ["ENQUEUE numkeys -2", ["EMQ.ENQUEUE", -2, row("a", ID_A), k("a", "pending"), ID_A, "p"], enqueueKeys],
      [
        "ENQUEUE numkeys 02",
        ["EMQ.ENQUEUE", "02", row("a", ID_A), k("a", "pending"), ID_A, "p"],
        enqueueKeys,
      ],
      ["ENQUEUE numkeys beyond the arguments", ["EMQ.ENQUEUE", 2, row("a", ID_A)], enqueueKeys],
      ["ENQUEUE without payload", ["EMQ.ENQUEUE", 2, row("a", ID_A), k("a", "pending"), ID_A], enqueueValues],
      ["ENQUEUE with an extra value", [...enqueueArgs("a", ID_A), "x"], enqueueValues],
      // Shape comes before layout: wrong count with keys that would also fail the layout.
      ["ENQUEUE bad layout and a missing value", ["EMQ.ENQUEUE", 2, "x", "y", ID_A], enqueueValues],
      ["CLAIM without arguments", ["EMQ.CLAIM"], claimKeysText],
      [
        "CLAIM numkeys 2",
        ["EMQ.CLAIM", 2, k("a", "pending"), k("a", "active"), k("a", ""), 1000],
        claimKeysText,
      ],
      ["CLAIM numkeys not a number", ["EMQ.CLAIM", "3x", ...claimKeys("a"), 1000], claimKeysText],
      ["CLAIM without lease", ["EMQ.CLAIM", 3, ...claimKeys("a")], claimValues],
      ["CLAIM with an extra value", [...claimArgs("a"), "x"], claimValues],
      ["CLAIM bad layout and an extra value", ["EMQ.CLAIM", 3, "x", "y", "z", 1, 2], claimValues],
    ];

    for (const [state, brand] of [
      ["unbranded node", null],
      ["branded node", WIRE6],
    ] as const) {
      describe(state, () => {
        beforeEach(async () => {
          await resetTo(server, brand);
          await seedAll();
        });

        test("shape refusals name the form (not EMQWIRE)", async () => {
          for (const [label, args, text] of shapes) {
            await assertRefusedUnchanged(server.port, args, text).catch((err: Error) => {
              throw new Error(`${label}: ${err.message}`);
            });
          }
        });

        test("ENQUEUE layout refusals: exactly the layout error (not EMQWIRE)", async () => {
          assert.equal(enqueueLayout.length, 18);
          for (const [label, args] of enqueueLayout) {
            await assertRefusedUnchanged(server.port, args, LAYOUT("ENQUEUE")).catch((err: Error) => {
              throw new Error(`${label}: ${err.message}`);
            });
          }
        });

        test("CLAIM layout refusals: exactly the layout error (not EMQWIRE)", async () => {
          assert.equal(claimLayout.length, 17);
          for (const [label, args] of claimLayout) {
            await assertRefusedUnchanged(server.port, args, LAYOUT("CLAIM")).catch((err: Error) => {
              throw new Error(`${label}: ${err.message}`);
            });
          }
        });
      });
    }

    test("unbranded: the fence comes before the values and the gates", async () => {
      await seedAll();
      const nil = "EMQWIRE expected echomq:6.0.0 found (nil)";
      await assertRefusedUnchanged(server.port, claimArgs("a", 0), nil); // bad lease
      await assertRefusedUnchanged(server.port, claimArgs("a", "x"), nil);
      await assertRefusedUnchanged(server.port, enqueueArgs("a", ID_A), nil); // duplicate
      await assertRefusedUnchanged(
        server.port,
        ["EMQ.ENQUEUE", 2, row("a", "XYZ0000000000A"), k("a", "pending"), "XYZ0000000000A", "p"],
        nil,
      ); // not a JOB id
      // Branded, the same calls reach their own step.
      await server.cli("SET", V, WIRE6);
      await assertRefusedUnchanged(
        server.port,
        claimArgs("a", 0),
        "ERR EMQ.CLAIM lease must be a positive integer of milliseconds",
      );
      await assertRefusedUnchanged(
        server.port,
        ["EMQ.ENQUEUE", 2, row("a", "XYZ0000000000A"), k("a", "pending"), "XYZ0000000000A", "p"],
        "ERR EMQ.ENQUEUE id must start with JOB",
      );
      assert.equal(await call(server.port, enqueueArgs("a", ID_A)), 0);
    });

    test("the queue-name rule's edges pass the layout: 255 bytes, spaces, colons, bytes ≥ 0x80", async () => {
      await resetTo(server, WIRE6);
      for (const q of ["q".repeat(255), " a:b ~", "\u00e9\u00ff"]) {
        assert.equal(await call(server.port, enqueueArgs(q, ID_A)), 1, JSON.stringify(q));
        const job = (await call(server.port, claimArgs(q))) as RespReply[];
        assert.equal(String(job[0]), ID_A, JSON.stringify(q));
      }
    });
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

/* ------------------------------------------------------------------ wire 4 vs wire 6 keyspace */

describe("keyspace equality: wire-4 scripts vs the native verbs", () => {
  let plain: ValkeyServer;
  let mod: ValkeyServer;
  before(async () => {
    [plain, mod] = await Promise.all([startValkey(), startValkey({ module: modulePath() })]);
  });
  after(async () => {
    await Promise.all([plain.stop(), mod.stop()]);
  });

  test("enqueue + claim through both wires: the same keys and values, but lease_epoch = run_id and active scores in their time windows", async () => {
    assert.equal(await installModuleBrand({ port: mod.port }), 1);
    const c4 = await connect({ port: plain.port });
    const c6 = await connect({ port: mod.port, wire: 6, requiredVerbs: VERBS });
    const q = "orders:eq";
    const lease = 30_000;
    const jobs: [string, string | Buffer][] = [
      [newId(), "alpha"],
      [newId(), Buffer.from([0, 1, 2, 0xff, 13, 10, 0x7b])],
      [newId(), ""],
    ];
    for (const [id, payload] of jobs) {
      assert.deepEqual(await enqueue(c4, q, payload, { id }), { id, duplicate: false });
      assert.deepEqual(await enqueue(c6, q, payload, { id }), { id, duplicate: false });
    }
    assert.deepEqual(await enqueue(c4, q, "dup", { id: jobs[0]![0] }), { id: jobs[0]![0], duplicate: true });
    assert.deepEqual(await enqueue(c6, q, "dup", { id: jobs[0]![0] }), { id: jobs[0]![0], duplicate: true });

    const windows = { [plain.port]: new Map<string, [number, number]>(), [mod.port]: new Map() };
    for (let i = 0; i < 2; i++) {
      for (const [conn, server] of [
        [c4, plain],
        [c6, mod],
      ] as const) {
        const t0 = await serverMs(server.port);
        const job = await claim(conn, q, lease);
        const t1 = await serverMs(server.port);
        assert.ok(job);
        assert.equal(job.id, jobs[i]![0], "lowest id first");
        assert.deepEqual(job.payload, Buffer.from(jobs[i]![1]));
        assert.equal(job.attempts, 1);
        assert.ok(
          job.deadline >= t0 + lease && job.deadline <= t1 + lease,
          `deadline in window (wire ${conn.wire})`,
        );
        windows[server.port]!.set(job.id, [t0 + lease, t1 + lease]);
      }
    }
    await c4.close();
    await c6.close();

    const d4 = await dumpAll(plain.port);
    const d6 = await dumpAll(mod.port);
    assert.deepEqual(d4[V], { type: "string", value: WIRE4 });
    assert.deepEqual(d6[V], { type: "string", value: WIRE6 });
    delete d4[V];
    delete d6[V];
    assert.deepEqual(Object.keys(d6), Object.keys(d4), "the same keys");
    assert.deepEqual(Object.keys(d4).sort(), [
      `emq:{${q}}:active`,
      `emq:{${q}}:events`,
      ...jobs.map(([id]) => `emq:{${q}}:job:${id}`).sort(),
      `emq:{${q}}:pending`,
    ]);
    const epoch = await runId(mod.port);
    const claimed = new Set(jobs.slice(0, 2).map(([id]) => id));
    for (const key of Object.keys(d4)) {
      const a = d4[key]!;
      const b = d6[key]!;
      assert.equal(b.type, a.type, key);
      if (key === `emq:{${q}}:active`) {
        for (const [side, port] of [
          [a, plain.port],
          [b, mod.port],
        ] as const) {
          const flat = side.value as string[];
          assert.equal(flat.length, 4);
          for (let i = 0; i < flat.length; i += 2) {
            const [lo, hi] = windows[port]!.get(flat[i]!)!;
            const score = Number(flat[i + 1]);
            assert.ok(score >= lo && score <= hi, `${flat[i]} score ${score} in [${lo}, ${hi}]`);
          }
        }
        assert.deepEqual(
          (b.value as string[]).filter((_, i) => i % 2 === 0),
          (a.value as string[]).filter((_, i) => i % 2 === 0),
          "the same members in the same order",
        );
      } else if (a.type === "hash") {
        const native = { ...(b.value as Record<string, string>) };
        const id = key.slice(key.lastIndexOf(":") + 1);
        if (claimed.has(id)) {
          assert.equal(native.lease_epoch, epoch, `${key}: lease_epoch is the run_id`);
          delete native.lease_epoch;
        } else {
          assert.equal(native.lease_epoch, undefined, `${key}: an unclaimed row has no lease_epoch`);
        }
        assert.equal((a.value as Record<string, string>).lease_epoch, undefined);
        assert.deepEqual(native, a.value, `${key} field by field`);
      } else if (a.type === "stream") {
        // Entry ids are each server's time: the same entries, fields and order.
        const fields = (side: typeof a) => (side.value as string[][]).map(([, ...rest]) => rest);
        assert.deepEqual(fields(b), fields(a), key);
        assert.equal(fields(a).length, jobs.length + 2, "an added entry per job, an active per claim");
      } else {
        assert.deepEqual(b, a, key);
      }
    }
    assert.deepEqual(d4[`emq:{${q}}:job:${jobs[0]![0]}`]!.value, {
      state: "active",
      attempts: "1",
      payload: "alpha",
    });
  });

  test("lease-exact: EVAL claim.lua, EMQ.CLAIM and TIME in one MULTI/EXEC give equal deadlines = TIME ms + lease", async () => {
    await resetTo(mod, WIRE6);
    const id = newId();
    const c6 = await connect({ port: mod.port, wire: 6, requiredVerbs: VERBS });
    await enqueue(c6, "lx1", "one", { id });
    await enqueue(c6, "lx2", "one", { id });
    await c6.close();
    const replies = await rawCommands(mod.port, [
      ["MULTI"],
      ["EVAL", scriptFor("CLAIM").source, 3, ...claimKeys("lx1"), 30000],
      ["EMQ.CLAIM", 3, ...claimKeys("lx2"), 30000],
      ["TIME"],
      ["EXEC"],
    ]);
    const exec = replies[4] as [unknown[], unknown[], string[]];
    assert.ok(Array.isArray(exec), `EXEC replied ${String(replies[4])}`);
    const [script, native, time] = exec;
    const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    assert.deepEqual(script, [id, "one", 1, now + 30000, 0]);
    assert.deepEqual(native, [id, "one", 1, now + 30000, 0]);
    assert.equal(Number(await mod.cli("ZSCORE", k("lx1", "active"), id)), now + 30000);
    assert.equal(Number(await mod.cli("ZSCORE", k("lx2", "active"), id)), now + 30000);
    const d = await dumpAll(mod.port);
    assert.deepEqual(d[row("lx1", id)]!.value, { state: "active", attempts: "1", payload: "one" });
    assert.deepEqual(d[row("lx2", id)]!.value, {
      state: "active",
      attempts: "1",
      payload: "one",
      lease_epoch: await runId(mod.port),
    });
  });
});

/* ------------------------------------------------------------------ AOF and replica */

describe("replication: AOF and a replica receive plain commands", () => {
  let primary: ValkeyServer;
  let replica: ValkeyServer;
  before(async () => {
    primary = await startValkey({ module: modulePath(), aof: true });
    replica = await startValkey({
      module: modulePath(),
      replicaOf: { host: "127.0.0.1", port: primary.port },
    });
  });
  after(async () => {
    await replica.stop();
    await primary.stop();
  });

  test("a wire-6 batch: no EMQ.* record in the AOF, the replica holds the same keyspace, a restart reloads it", async () => {
    assert.equal(await installModuleBrand({ port: primary.port }), 1);
    const conn = await connect({ port: primary.port, wire: 6, requiredVerbs: VERBS });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const q = i % 2 === 0 ? "aof-a" : "aof-b";
      const { id, duplicate } = await enqueue(conn, q, `payload ${i}`);
      assert.equal(duplicate, false);
      ids.push(id);
    }
    assert.equal((await enqueue(conn, "aof-a", "dup", { id: ids[0]! })).duplicate, true);
    const claimed: string[] = [];
    for (let i = 0; i < 5; i++) {
      const job = await claim(conn, i % 2 === 0 ? "aof-a" : "aof-b", 60_000);
      assert.ok(job);
      claimed.push(job.id);
    }
    // WAIT on the connection that wrote (WAIT counts acks of the calling client's own writes).
    assert.equal(await conn.send("WAIT", [1, 5000]), 1, "the replica acknowledged every write");
    await conn.close();
    await replicated(primary, replica);
    const onPrimary = await dumpAll(primary.port);
    assert.equal(
      Object.keys(onPrimary).length,
      1 + 12 + 2 + 2 + 2,
      "brand, 12 rows, 2 pending, 2 active, 2 event streams",
    );
    assert.deepEqual(await dumpAll(replica.port), onPrimary, "the replica holds the same keys and values");
    const epoch = await runId(primary.port);
    for (const id of claimed) {
      const key = Object.keys(onPrimary).find((name) => name.endsWith(`:job:${id}`));
      assert.ok(key, `a row for ${id}`);
      assert.equal((onPrimary[key]!.value as Record<string, string>).lease_epoch, epoch);
    }

    const dir = join(primary.dir, "appendonlydir");
    const files = readdirSync(dir);
    assert.ok(
      files.some((f) => f.endsWith(".incr.aof")),
      `AOF files: ${files.join(", ")}`,
    );
    const aof = files.map((f) => readFileSync(join(dir, f), "latin1")).join("\n");
    assert.doesNotMatch(aof, /emq\./i, "no EMQ.* record in the AOF");
    assert.match(aof, /\r\nHSET\r\n/, "the rows were logged as HSET");
    assert.match(aof, /\r\nZADD\r\n/, "the sets were logged as ZADD");
    assert.ok(aof.includes(epoch), "the lease_epoch was logged");

    await replica.stop();
    await primary.restart();
    assert.notEqual(await runId(primary.port), epoch, "a new process");
    assert.deepEqual(await dumpAll(primary.port), onPrimary, "the AOF reload gives the same keyspace");
  });
});

/* ------------------------------------------------------------------ ACL */

describe("ACL: the fence reads as the calling client", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({
      module: modulePath(),
      acl: ["user u on >pw ~emq:{a}:* %R~{emq}:version +@all", "user n on >pw ~emq:{a}:* +@all"],
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

  test("a user who cannot read {emq}:version: the raw verb passes the NOPERM through; connect({wire:6}) → VersionFenceError", async () => {
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

/**
 * The native module's order of refusals against a real valkey-server: shape, then layout, then
 * the fence, each with its exact text and nothing written. The rest of the module: module.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import type { RespArg, RespReply } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import {
  assertRefusedUnchanged,
  call,
  CLAIM_FORM,
  claimArgs,
  claimKeys,
  ENQUEUE_FORM,
  enqueueArgs,
  ID_A,
  ID_B,
  k,
  LAYOUT,
  resetTo,
  row,
  seedJob,
  V,
  WIRE6,
} from "./support/module.js";

describe("module: refusals", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ module: modulePath() });
  });
  after(() => server.stop());
  beforeEach(() => resetTo(server, null));

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
      ["anchor with trailing bytes", ["EMQ.ENQUEUE", 2, row("a", ID_A), `${k("a", "pending")} `, ID_A, "p"]],
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
      const nil = `EMQWIRE expected ${WIRE6} found (nil)`;
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
});

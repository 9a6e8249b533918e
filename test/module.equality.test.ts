/**
 * Keyspace equality between the wire-4 scripts and the module's native verbs: enqueue and claim
 * through both wires leave the same keys and values (lease_epoch = run_id, active scores and the
 * rows' processed_on in their time windows), and a claim is lease-exact against TIME in one
 * MULTI/EXEC (deadline and processed_on alike).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { connect } from "../src/index.js";
import { claim, enqueue, newId, scriptFor } from "../src/protocol.js";
import { installModuleBrand } from "../src/admin.js";
import { rawCommands } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import {
  claimKeys,
  dumpAll,
  k,
  resetTo,
  row,
  runId,
  serverMs,
  V,
  VERBS,
  WIRE4,
  WIRE6,
} from "./support/module.js";

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

  test("enqueue + claim through both wires: the same keys and values, but lease_epoch = run_id, active scores and processed_on in their time windows", async () => {
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
        const script = { ...(a.value as Record<string, string>) };
        const id = key.slice(key.lastIndexOf(":") + 1);
        if (claimed.has(id)) {
          assert.equal(native.lease_epoch, epoch, `${key}: lease_epoch is the run_id`);
          delete native.lease_epoch;
          // processed_on: the claim's now, the deadline less the lease, on each side's clock.
          for (const [fields, port] of [
            [script, plain.port],
            [native, mod.port],
          ] as const) {
            const [lo, hi] = windows[port]!.get(id)!;
            const on = Number(fields.processed_on);
            assert.ok(
              on >= lo - lease && on <= hi - lease,
              `${key} processed_on ${on} in [${lo - lease}, ${hi - lease}]`,
            );
            delete fields.processed_on;
          }
        } else {
          assert.equal(native.lease_epoch, undefined, `${key}: an unclaimed row has no lease_epoch`);
          assert.equal(native.processed_on, undefined, `${key}: an unclaimed row has no processed_on`);
        }
        assert.equal(script.lease_epoch, undefined);
        assert.deepEqual(native, script, `${key} field by field`);
      } else if (a.type === "stream") {
        // Entry ids are each server's time: the same entries, fields and order.
        const fields = (side: typeof a) => (side.value as string[][]).map(([, ...rest]) => rest);
        assert.deepEqual(fields(b), fields(a), key);
        assert.equal(fields(a).length, jobs.length + 2, "an added entry per job, an active per claim");
      } else {
        assert.deepEqual(b, a, key);
      }
    }
    const first = { ...(d4[`emq:{${q}}:job:${jobs[0]![0]}`]!.value as Record<string, string>) };
    assert.match(first.processed_on ?? "", /^\d+$/);
    delete first.processed_on;
    assert.deepEqual(first, { state: "active", attempts: "1", payload: "alpha" });
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
    const leased = { state: "active", attempts: "1", payload: "one", processed_on: String(now) };
    assert.deepEqual(d[row("lx1", id)]!.value, leased);
    assert.deepEqual(d[row("lx2", id)]!.value, { ...leased, lease_epoch: await runId(mod.port) });
  });
});

/**
 * The module's write guard against real valkey-server processes: a writable replica refuses every
 * verb with the server's READONLY text; the admissions (and EMQ.INSTALL) are registered
 * `write deny-oom` and refused over `maxmemory` before shape, layout and fence, while the drains
 * and controls are registered `write` and run there.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { installModuleBrand } from "../src/admin.js";
import { VERB_SPECS } from "../src/protocol.js";
import { NO_SERVER_TIMERS } from "./support/wires.js";
import { type RespReply, rawCommands } from "./support/resp.js";
import {
  assertRefusedUnchanged,
  call,
  claimArgs,
  dumpAll,
  enqueueArgs,
  ID_A,
  ID_B,
  infoNumber,
  JOB_CORE,
  k,
  LAYOUT,
  OOM,
  READONLY,
  replicated,
  resetTo,
  row,
  seedJob,
  WIRE6,
} from "./support/module.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

/* ------------------------------------------------------------------ write guard */

describe("write guard", () => {
  let primary: ValkeyServer;
  let replica: ValkeyServer;
  before(async () => {
    // The module's own timers off: a tick could promote what a test reschedules before its PROMOTE.
    primary = await startValkey({ module: modulePath(), moduleArgs: NO_SERVER_TIMERS });
    replica = await startValkey({
      module: modulePath(),
      replicaOf: { host: "127.0.0.1", port: primary.port },
      extraArgs: ["--replica-read-only", "no"],
    });
  });
  after(async () => {
    await replica.stop();
    await primary.stop();
  });

  test("a writable replica: EMQ.ENQUEUE and EMQ.CLAIM answer the READONLY text and write nothing", async () => {
    assert.equal(await installModuleBrand({ port: primary.port }), 1);
    const replies = await rawCommands(primary.port, [
      enqueueArgs("q", ID_A, "from primary"),
      ["WAIT", 1, 5000],
    ]);
    assert.deepEqual(replies, [1, 1], "enqueued and acknowledged by the replica");
    await replicated(primary, replica);
    const onPrimary = await dumpAll(primary.port);
    assert.deepEqual(await dumpAll(replica.port), onPrimary, "synced");

    await assertRefusedUnchanged(replica.port, enqueueArgs("q", ID_B, "on replica"), READONLY);
    await assertRefusedUnchanged(replica.port, claimArgs("q"), READONLY);
    // The steps before the guard still answer: layout, and the duplicate gate (a read-only answer).
    await assertRefusedUnchanged(replica.port, enqueueArgs("", ID_B), LAYOUT("ENQUEUE"));
    assert.equal(await call(replica.port, enqueueArgs("q", ID_A)), 0);
    assert.deepEqual(await dumpAll(replica.port), onPrimary);
    assert.deepEqual(await dumpAll(primary.port), onPrimary);
    // The server itself takes writes on this replica: the refusal was the module's guard.
    assert.equal(await replica.cli("SET", "scratch", "1"), "OK");
  });

  test("registration: the admissions (and EMQ.INSTALL) are write deny-oom, the drains and controls write only", async () => {
    // The admissions: the verbs the protocol data classes so (the specification names ENQUEUE, ADD
    // and RETRY), and EMQ.INSTALL.
    const admissions = [
      "emq.install",
      ...[...VERB_SPECS.values()]
        .filter((v) => v.class === "admission")
        .map((v) => `emq.${v.verb.toLowerCase()}`),
    ];
    for (const name of ["emq.enqueue", "emq.add", "emq.retry"]) assert.ok(admissions.includes(name), name);
    for (const verb of ["INSTALL", ...JOB_CORE]) {
      const name = `emq.${verb.toLowerCase()}`;
      const [info] = (await primary.cli("COMMAND", "INFO", name)) as RespReply[][];
      const flags = (info![2] as RespReply[]).map(String).sort();
      const want = admissions.includes(name) ? ["denyoom", "module", "write"] : ["module", "write"];
      assert.deepEqual(flags, want, name);
    }
  });

  test("over maxmemory: admissions answer the OOM text before shape, layout and fence; drains run", async () => {
    await resetTo(primary, WIRE6);
    await seedJob(primary.port, "m", ID_A);
    await seedJob(primary.port, "m", ID_B);
    const info = String(await primary.cli("INFO", "memory"));
    const counted = infoNumber(info, "used_memory") - infoNumber(info, "mem_not_counted_for_evict");
    await primary.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
    await primary.cli("CONFIG", "SET", "maxmemory", String(counted - 64 * 1024));
    try {
      for (const args of [
        enqueueArgs("m", "JOB0000000000C"),
        enqueueArgs("m", ID_A), // a duplicate
        ["EMQ.ENQUEUE", 1, k("m", "pending")], // a wrong shape
        enqueueArgs("", "JOB0000000000C"), // a wrong layout
        [
          "EMQ.ADD",
          3,
          row("m", "JOB0000000000C"),
          k("m", "pending"),
          k("m", "schedule"),
          "JOB0000000000C",
          "p",
          "0",
          "9",
          "0",
          "",
          "",
          "",
          "0",
          "0",
          "",
          "",
          "",
        ],
        ["EMQ.RETRY", 3, k("m", "dead"), k("m", "pending"), k("m", ""), ID_A, 1],
      ]) {
        await assertRefusedUnchanged(primary.port, args, OOM);
      }
      const job = (await call(primary.port, claimArgs("m"))) as RespReply[];
      assert.equal(String(job[0]), ID_A);
      const active = [k("m", "active"), k("m", "schedule"), k("m", "")];
      assert.ok(Number(await call(primary.port, ["EMQ.RESCHEDULE", 3, ...active, ID_A, 1, 0])) > 0);
      const resume = ["EMQ.RESUME", 2, k("m", "meta"), k("m", "pending")];
      assert.equal(await call(primary.port, ["EMQ.PAUSE", 1, k("m", "meta")]), 1);
      assert.equal(await call(primary.port, resume), 1);
      assert.equal(
        await call(primary.port, ["EMQ.PROMOTE", 3, k("m", "schedule"), k("m", "pending"), k("m", ""), 10]),
        1,
      );
      const removed = [
        "EMQ.REMOVE",
        5,
        ...(["pending", "schedule", "done", "dead", ""] as const).map((t) => k("m", t)),
        ID_B,
      ];
      assert.equal(await call(primary.port, removed), 1);
    } finally {
      await primary.cli("CONFIG", "SET", "maxmemory", "0");
    }
    assert.deepEqual(await call(primary.port, ["ZRANGE", k("m", "pending"), 0, -1]), [ID_A]);
  });
});

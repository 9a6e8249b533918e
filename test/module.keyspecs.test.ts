/**
 * The module's registration against real valkey-server processes, checked against the protocol
 * data it is made from (`protocol/verbs/<verb>.json`, `protocol/protocol.json`): for every
 * command, `COMMAND INFO` lists one key spec per declared key (its position and flags) and the
 * flags of its class, `COMMAND GETKEYS` / `GETKEYSANDFLAGS` return the declared keys, `COMMAND
 * DOCS` its summary; ACL key rules apply per declared key with its flags — the base `emq:{q}:`
 * too, whose check stands for the keys derived from it (rows, meta); cluster routing sees every
 * declared key.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { installModuleBrand } from "../src/admin.js";
import { type KeySlot, PROTOCOL, VERB_SPECS, type VerbSpec } from "../src/verbs/index.js";
import { call, chunk, ID_A, refusalOf, V } from "./support/module.js";
import type { RespArg, RespReply } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

/* ------------------------------------------------------------------ the protocol data */

/** The data, as the one reader loads it. */
type VerbDecl = VerbSpec;
const protocol = PROTOCOL;
const VERBS: VerbDecl[] = [...VERB_SPECS.values()];

/** How `COMMAND INFO` prints a key-spec flag of the data. */
const SPEC_FLAG: Record<string, string> = {
  RO: "RO",
  RW: "RW",
  OW: "OW",
  RM: "RM",
  ACCESS: "access",
  UPDATE: "update",
  INSERT: "insert",
  DELETE: "delete",
  NOT_KEY: "not_key",
};
/** How `COMMAND INFO` prints a command flag of a class. */
const COMMAND_FLAG: Record<string, string> = {
  write: "write",
  "deny-oom": "denyoom",
  readonly: "readonly",
  fast: "fast",
};

/** A declared key of queue `q` (job id `id` for the row). */
function keyOf(slot: string, q: string, id: string): string {
  return protocol.key_slots[slot as KeySlot].pattern.replace("{q}", `{${q}}`).replace("<id>", id);
}

/** A whole call of `verb` on queue `q`: its declared keys, then one placeholder per value (the id first). */
function callOf(v: VerbDecl, q = "a", id = ID_A): RespArg[] {
  if (v.keys.length === 0 && v.values.length === 0) return [`EMQ.${v.verb}`];
  const keys = v.keys.map((key) => keyOf(key.slot, q, id));
  const values = v.values.map((value) => (value.slot === "id" ? id : "1"));
  return [`EMQ.${v.verb}`, v.keys.length, ...keys, ...values];
}

/** A RESP2 flat map ([k, v, k, v…]) as a Map. */
function map(reply: RespReply): Map<string, RespReply> {
  const items = reply as RespReply[];
  const out = new Map<string, RespReply>();
  for (let i = 0; i < items.length; i += 2) out.set(String(items[i]), items[i + 1]!);
  return out;
}

const strings = (reply: RespReply) => (reply as RespReply[]).map(String).sort();

/* ------------------------------------------------------------------ registration */

describe("registration: COMMAND INFO / GETKEYS / DOCS follow the protocol data", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({ module: modulePath() });
  });
  after(() => server.stop());

  test("every verb file is a registered command, and every command has a file", async () => {
    const listed = ((await server.cli("COMMAND", "LIST", "FILTERBY", "MODULE", "echomq")) as RespReply[])
      .map(String)
      .sort();
    assert.deepEqual(listed, VERBS.map((v) => `emq.${v.verb.toLowerCase()}`).sort());
  });

  for (const v of VERBS) {
    test(`EMQ.${v.verb}: arity, class flags, one key spec per declared key, legacy range`, async () => {
      const [info] = (await server.cli("COMMAND", "INFO", `EMQ.${v.verb}`)) as RespReply[][];
      assert.ok(info, "registered");
      const [name, arity, flags, first, last, step, , , specs] = info;
      assert.equal(String(name), `emq.${v.verb.toLowerCase()}`);
      assert.equal(arity, -1, "the shape step counts the arguments");
      const want = protocol.classes[v.class]!.flags.split(" ").map((f) => COMMAND_FLAG[f]!);
      if (v.blocking) want.push("blocking");
      assert.deepEqual(strings(flags!), [...want, "module"].sort());
      // Cluster routing reads the legacy range the server glues from the consecutive specs.
      const n = v.keys.length;
      assert.deepEqual([first, last, step], n === 0 ? [0, 0, 0] : [2, 1 + n, 1]);
      const got = (specs as RespReply[]).map(map);
      assert.equal(got.length, n, "one key spec per declared key");
      v.keys.forEach((key, i) => {
        const spec = got[i]!;
        assert.deepEqual(strings(spec.get("flags")!), key.flags.map((f) => SPEC_FLAG[f]!).sort(), key.slot);
        const begin = map(spec.get("begin_search")!);
        assert.equal(String(begin.get("type")), "index");
        assert.equal(map(begin.get("spec")!).get("index"), 2 + i, `${key.slot} at argv ${2 + i}`);
        const find = map(spec.get("find_keys")!);
        assert.equal(String(find.get("type")), "range");
        const range = map(find.get("spec")!);
        assert.deepEqual([range.get("lastkey"), range.get("keystep"), range.get("limit")], [0, 1, 0]);
      });
    });

    test(`EMQ.${v.verb}: COMMAND GETKEYS / GETKEYSANDFLAGS return the declared real keys; DOCS its summary`, async () => {
      const args = callOf(v);
      const real = v.keys.filter((key) => !key.flags.includes("NOT_KEY"));
      if (real.length === 0) {
        assert.equal(
          refusalOf(await call(server.port, ["COMMAND", "GETKEYS", ...args])),
          "ERR The command has no key arguments",
        );
      } else {
        const keys = await server.cli("COMMAND", "GETKEYS", ...args);
        assert.deepEqual(
          (keys as RespReply[]).map(String),
          real.map((key) => keyOf(key.slot, "a", ID_A)),
        );
        const withFlags = (await server.cli("COMMAND", "GETKEYSANDFLAGS", ...args)) as RespReply[][];
        assert.deepEqual(
          withFlags.map(([key, flags]) => [String(key), strings(flags!)]),
          real.map((key) => [keyOf(key.slot, "a", ID_A), key.flags.map((f) => SPEC_FLAG[f]!).sort()]),
        );
      }
      const docs = map((await server.cli("COMMAND", "DOCS", `EMQ.${v.verb}`)) as RespReply);
      const doc = map(docs.get(`emq.${v.verb.toLowerCase()}`)!);
      assert.equal(String(doc.get("summary")), v.summary);
    });
  }

  test("a call too short for its keys: GETKEYS finds none, the verb answers its shape refusal", async () => {
    const claim = VERBS.find((v) => v.verb === "CLAIM")!;
    const short = ["EMQ.CLAIM", 3, keyOf("pending", "a", ID_A)];
    assert.equal(
      refusalOf(await call(server.port, ["COMMAND", "GETKEYS", ...short])),
      "ERR Invalid arguments specified for command",
    );
    assert.equal(
      refusalOf(await call(server.port, short)),
      `ERR EMQ.CLAIM wrong number of keys: EMQ.CLAIM ${claim.keys.length} <pending> <active> <base> <lease_ms>`,
    );
  });
});

/* ------------------------------------------------------------------ ACL by key spec */

describe("ACL: the server checks each declared key with its own flags before the handler", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({
      module: modulePath(),
      acl: [
        // Read-only on the queue: every verb that writes a declared key is refused.
        `user r on >pw %R~emq:{a}:* %R~${V} +@all`,
        // Granted each key by name, not the queue's prefix (so not its base `emq:{a}:`).
        `user k on >pw ~emq:{a}:pending ~emq:{a}:active ~emq:{a}:meta ~emq:{a}:job:* %R~${V} +@all`,
        // Limited to queue a.
        `user u on >pw ~emq:{a}:* %R~${V} +@all`,
        // RESUME: writes meta, only reads pending (RO ACCESS).
        `user m on >pw ~emq:{a}:meta %R~emq:{a}:pending %R~${V} +@all`,
      ],
    });
    assert.equal(await installModuleBrand({ port: server.port }), 1);
  });
  after(() => server.stop());

  test("a read-only user: EMQ.CLAIM refused by the server (NOPERM, ACL LOG context toplevel, the anchor named)", async () => {
    const claim = VERBS.find((v) => v.verb === "CLAIM")!;
    const auth = { user: "r", password: "pw" };
    assert.match(refusalOf(await call(server.port, callOf(claim), auth)), /^NOPERM/);
    const log = (await server.cli("ACL", "LOG")) as unknown[][];
    const entry = log.map((e) => new Map(chunk(e.map(String)))).find((e) => e.get("username") === "r");
    assert.equal(entry?.get("context"), "toplevel");
    assert.equal(entry?.get("reason"), "key");
    assert.equal(entry?.get("object"), "emq:{a}:pending");
  });

  /** The last ACL LOG entry of `user`, as a map. */
  async function lastDenial(user: string): Promise<Map<string, string> | undefined> {
    const log = (await server.cli("ACL", "LOG")) as unknown[][];
    return log.map((e) => new Map(chunk(e.map(String)))).find((e) => e.get("username") === user);
  }

  test("the base stands for the keys derived from it: granted the named keys but not the queue, EMQ.CLAIM is refused on the base", async () => {
    const claim = VERBS.find((v) => v.verb === "CLAIM")!;
    assert.match(refusalOf(await call(server.port, callOf(claim), { user: "k", password: "pw" })), /^NOPERM/);
    const entry = await lastDenial("k");
    assert.equal(entry?.get("object"), "emq:{a}:");
  });

  test("a user limited to queue a: the base of queue b is refused by the server, before the layout step, whatever numkeys says", async () => {
    const auth = { user: "u", password: "pw" };
    for (const numkeys of [2, 0]) {
      const extend = ["EMQ.EXTEND", numkeys, "emq:{a}:active", "emq:{b}:", ID_A, 1, 1000];
      assert.match(refusalOf(await call(server.port, extend, auth)), /^NOPERM/, `numkeys ${numkeys}`);
      assert.equal((await lastDenial("u"))?.get("object"), "emq:{b}:");
    }
    const extend = VERBS.find((v) => v.verb === "EXTEND")!;
    const own = refusalOf(await call(server.port, callOf(extend), auth));
    assert.equal(own, "ERR EMQ.EXTEND job not found", "its own queue: the verb runs");
  });

  test("RESUME only reads pending: a user who may only read it resumes", async () => {
    const resume = VERBS.find((v) => v.verb === "RESUME")!;
    assert.deepEqual(await call(server.port, ["HSET", "emq:{a}:meta", "paused", "1"]), 1);
    assert.equal(await call(server.port, callOf(resume), { user: "m", password: "pw" }), 1);
  });
});

/* ------------------------------------------------------------------ cluster routing */

describe("cluster: routing sees every declared key", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey({
      module: modulePath(),
      cluster: true,
      extraArgs: ["--cluster-require-full-coverage", "no"],
    });
  });
  after(() => server.stop());

  test("a base of another queue: CROSSSLOT from the server, before the layout step", async () => {
    const claim = ["EMQ.CLAIM", 3, "emq:{a}:pending", "emq:{a}:active", "emq:{zz}:", 1000];
    assert.match(refusalOf(await call(server.port, claim)), /^CROSSSLOT/);
  });

  test("the anchor's slot decides: served → the handler runs; not served → the server refuses", async () => {
    const claim = VERBS.find((v) => v.verb === "CLAIM")!;
    // The handler ran: whatever it answers, it is not the server's routing refusal. (It is the
    // fence's: in cluster mode a command's key lookups use its own slot, so the brand key of
    // another slot reads as absent — a limit of the fence on a cluster, not of routing.)
    const served = await call(server.port, callOf(claim, "a"));
    assert.doesNotMatch(served instanceof Error ? served.message : "", /^(CLUSTERDOWN|MOVED|ASK|CROSSSLOT)/);
    const slot = Number(await server.cli("CLUSTER", "KEYSLOT", "emq:{b}:pending"));
    await server.cli("CLUSTER", "DELSLOTS", slot);
    assert.match(refusalOf(await call(server.port, callOf(claim, "b"))), /^CLUSTERDOWN Hash slot not served/);
    await server.cli("CLUSTER", "ADDSLOTS", slot);
  });
});

/**
 * `EMQ.BCLAIM`, the claim that waits inside the server (module 0.4.0, docs/protocol.md), on real
 * servers: at once when a job is pending (exactly `EMQ.CLAIM`'s reply and writes), else the
 * client waits on `<pending>` and is woken by every verb that makes a job ready — an add, a
 * promotion, a resume (not while paused), a requeue, a zero-backoff failure — or answered nil at
 * its timeout; two waiting clients and one job: one gets it. Its writes reach the AOF and the
 * replicas as plain commands; a node that turns replica ends the wait with `UNBLOCKED`.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { modulePath } from "../tools/module-path.js";
import { installModuleBrand } from "../src/admin.js";
import { claimArgs, claimKeys, dumpAll, enqueueArgs, k, refusalOf, row, WIRE6 } from "./support/module.js";
import { keysOf } from "../src/jobs/calls.js";
import { connectResp, type RespArg, type RespConnection, type RespReply } from "./support/resp.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

const bclaimArgs = (q: string, lease: RespArg = 30000, timeout: RespArg = 5000): RespArg[] => [
  "EMQ.BCLAIM",
  3,
  ...claimKeys(q),
  lease,
  timeout,
];

const ID_1 = "JOB00000000001";
const ID_2 = "JOB00000000002";

/** A reply promise, and whether it has settled yet. */
function watch(reply: Promise<RespReply>): { reply: Promise<RespReply>; settled: () => boolean } {
  let done = false;
  const settle = () => {
    done = true;
  };
  void reply.then(settle, settle);
  return { reply, settled: () => done };
}

/** The claim reply's id, payload and attempts (the deadline is checked apart). */
function claimed(reply: RespReply): [string, string, number] {
  assert.ok(Array.isArray(reply) && reply.length === 5, `a claim reply, got ${JSON.stringify(reply)}`);
  return [String(reply[0]), String(reply[1]), Number(reply[2])];
}

describe("EMQ.BCLAIM on one node", () => {
  let server: ValkeyServer;
  const clients: RespConnection[] = [];
  const client = async () => {
    const c = await connectResp(server.port);
    clients.push(c);
    return c;
  };

  before(async () => {
    server = await startValkey({ module: modulePath(), aof: true });
    await installModuleBrand({ port: server.port });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await server.stop();
  });
  beforeEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
    for (const key of (await server.cli("KEYS", "emq:*")) as string[]) await server.cli("DEL", key);
  });

  test("EMQ.VERSION lists BCLAIM under extensions; the command is flagged blocking", async () => {
    const version = (await server.cli("EMQ.VERSION")) as RespReply[];
    assert.deepEqual(version.slice(0, 4), ["wire", WIRE6, "module", "0.5.0"]);
    assert.deepEqual(version.slice(6, 8), ["extensions", ["BCLAIM"]]);
    const [info] = (await server.cli("COMMAND", "INFO", "emq.bclaim")) as RespReply[][];
    const flags = (info?.[2] ?? []) as RespReply[];
    assert.deepEqual(flags.map(String).sort(), ["blocking", "module", "write"]);
  });

  test("a job already pending: the reply and the writes are EMQ.CLAIM's (one MULTI, one clock)", async () => {
    const c = await client();
    for (const q of ["a", "b"]) await c.send(enqueueArgs(q, ID_1, "payload"));
    await c.send(["MULTI"]);
    await c.send(bclaimArgs("a", 30000));
    await c.send(claimArgs("b", 30000));
    const [viaWait, viaClaim] = (await c.send(["EXEC"])) as RespReply[];
    assert.deepEqual(viaWait, viaClaim);
    const dump = await dumpAll(server.port);
    const side = (q: string) =>
      Object.fromEntries(
        Object.entries(dump)
          .filter(([key]) => key.startsWith(`emq:{${q}}:`) && !key.endsWith(":events"))
          .map(([key, value]) => [key.replace(`{${q}}`, "{q}"), value]),
      );
    assert.deepEqual(side("a"), side("b"));
    assert.equal(Object.keys(side("a")).length, 2, "the row and active (pending emptied)");
  });

  test("inside MULTI with nothing to claim: nil at once", async () => {
    const c = await client();
    await c.send(["MULTI"]);
    await c.send(bclaimArgs("a", 30000, 10000));
    assert.deepEqual(await c.send(["EXEC"]), [null]);
  });

  test("values are checked first, naming EMQ.BCLAIM", async () => {
    const c = await client();
    assert.equal(
      refusalOf(await c.send(bclaimArgs("a", 0))),
      "ERR EMQ.BCLAIM lease must be a positive integer of milliseconds",
    );
    assert.equal(
      refusalOf(await c.send(bclaimArgs("a", 1000, "0"))),
      "ERR EMQ.BCLAIM timeout must be a positive integer of milliseconds",
    );
    assert.equal(
      refusalOf(await c.send(["EMQ.BCLAIM", 3, ...claimKeys("a"), 1000])),
      "ERR EMQ.BCLAIM wrong number of values: EMQ.BCLAIM 3 <pending> <active> <base> <lease_ms> <timeout_ms>",
    );
    assert.equal(
      refusalOf(await c.send(["EMQ.BCLAIM", 3, k("a", "pending"), k("b", "active"), k("a", ""), 1, 1])),
      "ERR EMQ.BCLAIM keys do not match the wire-4 layout",
    );
  });

  test("nothing to claim: nil at the timeout", async () => {
    const c = await client();
    const started = Date.now();
    assert.equal(await c.send(bclaimArgs("a", 30000, 150)), null);
    const waited = Date.now() - started;
    assert.ok(waited >= 140 && waited < 1000, `waited ${waited} ms`);
  });

  test("an add wakes the waiting client, which gets the job under its lease", async () => {
    const waiter = await client();
    const other = await client();
    const wait = watch(waiter.send(bclaimArgs("a", 30000, 5000)));
    await sleep(50);
    assert.equal(wait.settled(), false);
    const added = Date.now();
    assert.equal(await other.send(enqueueArgs("a", ID_1, "hello")), 1);
    const reply = await wait.reply;
    assert.ok(Date.now() - added < 200, "woken at once");
    assert.deepEqual(claimed(reply), [ID_1, "hello", 1]);
    const time = (await other.send(["TIME"])) as string[];
    const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    const deadline = Number((reply as RespReply[])[3]);
    assert.ok(deadline > now + 29_000 && deadline <= now + 30_000, `deadline ${deadline} at ${now}`);
    assert.equal(await other.send(["HGET", row("a", ID_1), "state"]), "active");
    assert.equal(await other.send(["ZCARD", k("a", "pending")]), 0);
  });

  test("a delayed job wakes the client when it is promoted: by the module's own timer", async () => {
    const waiter = await client();
    const other = await client();
    const wait = watch(waiter.send(bclaimArgs("a", 30000, 5000)));
    const add = [
      "EMQ.ADD",
      3,
      row("a", ID_1),
      k("a", "pending"),
      k("a", "schedule"),
      ID_1,
      "d",
      0,
      400,
      0,
      "",
      "",
      "",
      0,
      0,
      "",
      "",
      "",
    ];
    assert.equal(await other.send(add), 1);
    await sleep(100);
    assert.equal(wait.settled(), false, "a scheduled job is not ready");
    // No EMQ.PROMOTE is sent: the node's timer promotes the job at its due time, and the promotion
    // signals the pending key (else the client would wait out its 5 s timeout and get nil).
    assert.deepEqual(claimed(await wait.reply), [ID_1, "d", 1]);
    assert.equal(await other.send(["ZCARD", k("a", "schedule")]), 0);
  });

  test("a paused queue keeps the client waiting; the resume wakes it", async () => {
    const waiter = await client();
    const other = await client();
    await other.send(["EMQ.PAUSE", 1, ...keysOf("PAUSE", "a")]);
    const wait = watch(waiter.send(bclaimArgs("a", 30000, 5000)));
    await other.send(enqueueArgs("a", ID_1));
    await sleep(150);
    assert.equal(wait.settled(), false, "not while paused");
    assert.equal(await other.send(["ZCARD", k("a", "pending")]), 1);
    assert.equal(await other.send(["EMQ.RESUME", 2, ...keysOf("RESUME", "a")]), 1);
    assert.deepEqual(claimed(await wait.reply), [ID_1, "p", 1]);
  });

  test("the server's own signal: a plain ZADD that creates pending wakes the client, one to a pending that holds ids does not", async () => {
    const [waiter, other] = [await client(), await client()];
    await other.send(["EMQ.PAUSE", 1, ...keysOf("PAUSE", "a")]);
    const wait = watch(waiter.send(bclaimArgs("a", 30000, 5000)));
    await other.send(enqueueArgs("a", ID_1)); // signalled: the claim runs, finds the queue paused
    await other.send(["HDEL", k("a", "meta"), "paused"]); // unpaused behind the module's back
    await other.send(["HSET", row("a", ID_2), "state", "pending", "attempts", "0", "payload", "z"]);
    await other.send(["ZADD", k("a", "pending"), "0", ID_2]); // pending exists: no signal
    await sleep(150);
    assert.equal(wait.settled(), false, "a ZADD to an existing key signals nothing");
    await other.send(["DEL", k("a", "pending")]);
    await other.send(["ZADD", k("a", "pending"), "0", ID_2]); // the server adds the key: it signals
    assert.deepEqual(claimed(await wait.reply), [ID_2, "z", 1]);
  });

  test("two waiting clients and one job: exactly one gets it, the other waits on", async () => {
    const [first, second, other] = [await client(), await client(), await client()];
    const one = watch(first.send(bclaimArgs("a", 30000, 800)));
    const two = watch(second.send(bclaimArgs("a", 30000, 800)));
    await sleep(50);
    await other.send(enqueueArgs("a", ID_1));
    await sleep(100);
    const settled = [one.settled(), two.settled()];
    assert.deepEqual(settled.sort(), [false, true], "one answered, one still waiting");
    const replies = await Promise.all([one.reply, two.reply]);
    assert.equal(replies.filter((r) => r === null).length, 1, "the other timed out");
    assert.deepEqual(claimed(replies.find((r) => r !== null)!), [ID_1, "p", 1]);
    // With two jobs both are served.
    const three = watch(first.send(bclaimArgs("a", 30000, 2000)));
    const four = watch(second.send(bclaimArgs("a", 30000, 2000)));
    await sleep(50);
    await other.send(["MULTI"]);
    await other.send(enqueueArgs("a", ID_2));
    await other.send(enqueueArgs("a", "JOB00000000003"));
    await other.send(["EXEC"]);
    const ids = (await Promise.all([three.reply, four.reply])).map((r) => claimed(r)[0]).sort();
    assert.deepEqual(ids, [ID_2, "JOB00000000003"]);
  });

  test("a requeue and a zero-backoff failure make a job ready: they wake the client", async () => {
    const [waiter, other] = [await client(), await client()];
    await other.send(enqueueArgs("a", ID_1));
    const [, , token] = claimed(await other.send(claimArgs("a")));
    let wait = watch(waiter.send(bclaimArgs("a", 30000, 5000)));
    const requeue = ["EMQ.REQUEUE", 3, ...keysOf("REQUEUE", "a"), ID_1, token, 3];
    assert.equal(await other.send(requeue), 1);
    const [, , again] = claimed(await wait.reply);
    wait = watch(waiter.send(bclaimArgs("a", 30000, 5000)));
    const keys = (["active", "pending", "schedule", "dead", ""] as const).map((type) => k("a", type));
    const fail = ["EMQ.FAIL", 5, ...keys, ID_1, again, "boom", 0, 5, 10, ""];
    const failed = await other.send(fail);
    assert.ok(!(failed instanceof Error), String(failed));
    assert.deepEqual(claimed(await wait.reply).slice(0, 1), [ID_1]);
  });

  test("the AOF holds the claim's plain commands, never EMQ.BCLAIM", async () => {
    const [waiter, other] = [await client(), await client()];
    const wait = watch(waiter.send(bclaimArgs("aof", 30000, 5000)));
    await other.send(enqueueArgs("aof", ID_1));
    claimed(await wait.reply);
    const dir = join(server.dir, "appendonlydir");
    const text = readdirSync(dir)
      .map((file) => readFileSync(join(dir, file), "latin1"))
      .join("");
    assert.ok(!/EMQ\./i.test(text), "no EMQ.* record");
    assert.match(text, /ZADD\r\n\$\d+\r\nemq:\{aof\}:active/);
  });
});

describe("EMQ.BCLAIM when the node turns replica", () => {
  test("the waiting client gets UNBLOCKED, and the connection closes", async () => {
    const primary = await startValkey({ module: modulePath() });
    const node = await startValkey({ module: modulePath() });
    try {
      await installModuleBrand({ port: node.port });
      const waiter = await connectResp(node.port);
      const wait = watch(waiter.send(bclaimArgs("a", 30000, 10000)));
      await sleep(50);
      await node.cli("REPLICAOF", primary.host, String(primary.port));
      const reply = await wait.reply;
      assert.match(refusalOf(reply), /^UNBLOCKED force unblock from blocking operation/);
      await waiter.closed;
    } finally {
      await node.stop();
      await primary.stop();
    }
  });
});

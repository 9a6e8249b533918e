import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgumentError, ServerError } from "../src/index.js";
import { InvalidIdError, InvalidQueueNameError } from "../src/errors.js";
import { claim, enqueue, jobKey, newId, queueKey, scriptFor } from "../src/protocol.js";
import { keysOf } from "../src/jobs/calls.js";
import { monitor, names, untilSentinel } from "./support/monitor.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

async function serverMs(cli: (...a: string[]) => Promise<unknown>): Promise<number> {
  const [s, us] = (await cli("TIME")) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

forEachWire("enqueue and claim", (ctx) => {
  test("enqueue leaves exactly the row (state, attempts, payload) and the id in pending at score 0", async () => {
    const { conn, server } = ctx();
    const { id, duplicate } = await enqueue(conn, "quotes", "hello");
    assert.equal(duplicate, false);
    assert.deepEqual(await dumpQueue(server, "quotes"), {
      [jobKey("quotes", id)]: { state: "pending", attempts: "0", payload: "hello" },
      "emq:{quotes}:pending": [id, "0"],
    });
  });

  test("claim empties and removes pending, leases until server time + lease, marks the row active", async () => {
    const { conn, server, wire } = ctx();
    const { id } = await enqueue(conn, "quotes", "hello");
    const cli = (...a: string[]) => server.cli(...a);
    const before = await serverMs(cli);
    const job = await claim(conn, "quotes", 30_000);
    const afterMs = await serverMs(cli);
    assert.ok(job);
    assert.equal(job.id, id);
    assert.equal(job.payload.toString(), "hello");
    assert.equal(job.attempts, 1);
    assert.ok(
      job.deadline >= before + 30_000 && job.deadline <= afterMs + 30_000,
      "deadline in the server-time window",
    );
    // processed_on: the claim's now, the one its deadline counts from.
    const row: Record<string, string> = {
      state: "active",
      attempts: "1",
      payload: "hello",
      processed_on: String(job.deadline - 30_000),
    };
    if (wire === 6) {
      const info = String(await server.cli("INFO", "server"));
      row.lease_epoch = /run_id:(\w+)/.exec(info)![1]!;
    }
    assert.deepEqual(await dumpQueue(server, "quotes"), {
      [jobKey("quotes", id)]: row,
      "emq:{quotes}:active": [id, String(job.deadline)],
    });
  });

  test("a duplicate id enqueues nothing and says so", async () => {
    const { conn, server } = ctx();
    const id = newId();
    assert.deepEqual(await enqueue(conn, "q", "first", { id }), { id, duplicate: false });
    const before = await dumpQueue(server, "q");
    assert.deepEqual(await enqueue(conn, "q", "second", { id }), { id, duplicate: true });
    assert.deepEqual(await dumpQueue(server, "q"), before);
  });

  test("equal priority is FIFO; an empty queue claims null", async () => {
    const { conn } = ctx();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await enqueue(conn, "fifo", `p${i}`)).id);
    const got: string[] = [];
    for (let i = 0; i < 5; i++) got.push((await claim(conn, "fifo", 1000))!.id);
    assert.deepEqual(got, ids);
    assert.equal(await claim(conn, "fifo", 1000), null);
  });

  test("a paused queue: claim reads the flag in its own round trip and sends nothing else", async () => {
    const { conn, server } = ctx();
    await enqueue(conn, "paused", "x");
    await server.cli("HSET", queueKey("paused", "meta"), "paused", "1");
    const mon = await monitor(server.port);
    assert.equal(await claim(conn, "paused", 1000), null);
    assert.deepEqual(names(await untilSentinel(mon, conn)), ["HGET", "ECHO"]);
    assert.equal(await server.cli("ZCARD", queueKey("paused", "pending")), 1);
  });

  test("payload bytes round-trip: NUL, CRLF, invalid UTF-8, empty, 1 MiB", async () => {
    const { conn } = ctx();
    const payloads = [Buffer.from([0, 13, 10, 0xff, 0xfe, 0]), Buffer.alloc(0), Buffer.alloc(1 << 20, 0xab)];
    for (const p of payloads) await enqueue(conn, "bytes", p);
    for (const p of payloads) assert.deepEqual((await claim(conn, "bytes", 1000))!.payload, p);
  });

  test("bad input is refused on the host with a typed error, and nothing is sent", async () => {
    const { conn, server } = ctx();
    const mon = await monitor(server.port);
    const bad: [() => Promise<unknown>, new (...a: never[]) => Error][] = [
      [() => enqueue(conn, "a{b", "x"), InvalidQueueNameError],
      [() => enqueue(conn, "a}b", "x"), InvalidQueueNameError],
      [() => enqueue(conn, "a\u0000b", "x"), InvalidQueueNameError],
      [() => enqueue(conn, 5 as unknown as string, "x"), InvalidQueueNameError],
      [() => claim(conn, "{q}", 1000), InvalidQueueNameError],
      [() => claim(conn, null as unknown as string, 1000), InvalidQueueNameError],
      [() => enqueue(conn, "q", "x", { id: "JOB123" }), InvalidIdError],
      [() => enqueue(conn, "q", "x", { id: "job0Nb1VTbfnu4" }), InvalidIdError],
      [() => enqueue(conn, "q", "x", { id: 7 as unknown as string }), InvalidIdError],
      [() => enqueue(conn, "q", 5 as unknown as string), InvalidArgumentError],
      [() => enqueue(conn, "q", { a: 1 } as unknown as string), InvalidArgumentError],
      [() => enqueue(conn, "q", null as unknown as string), InvalidArgumentError],
      [() => enqueue(conn, "q", undefined as unknown as string), InvalidArgumentError],
    ];
    for (const lease of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1e16, "10" as unknown as number]) {
      bad.push([() => claim(conn, "q", lease), InvalidArgumentError]);
    }
    for (const [call, type] of bad) await assert.rejects(call(), type);
    assert.deepEqual(names(await untilSentinel(mon, conn)), ["ECHO"]);
  });
});

forEachWire("server-side refusals (same text on both wires)", (ctx) => {
  const rowAndPending = (q: string, id: string) => [`emq:{${q}}:job:${id}`, queueKey(q, "pending")];
  const claimKeys = (q: string) => keysOf("CLAIM", q);

  async function refused(run: () => Promise<unknown>, text: string): Promise<void> {
    await assert.rejects(run(), (e: unknown) => e instanceof ServerError && e.message === text);
  }

  test("ENQUEUE: shape, JOB prefix, wrong type — exact texts, nothing written", async () => {
    const { conn, server } = ctx();
    const form = "EMQ.ENQUEUE 2 <row> <pending> <id> <payload>";
    const id = newId();
    await refused(
      () => conn.eval(scriptFor("ENQUEUE"), [queueKey("q", "pending")], [id, "x"]),
      `ERR EMQ.ENQUEUE wrong number of keys: ${form}`,
    );
    await refused(
      () => conn.eval(scriptFor("ENQUEUE"), rowAndPending("q", id), [id]),
      `ERR EMQ.ENQUEUE wrong number of values: ${form}`,
    );
    const notJob = "XYZ0Nb1VTbfnu4";
    await refused(
      () => conn.eval(scriptFor("ENQUEUE"), rowAndPending("q", notJob), [notJob, "x"]),
      "ERR EMQ.ENQUEUE id must start with JOB",
    );
    await server.cli("SET", queueKey("q", "pending"), "not a zset");
    await refused(
      () => conn.eval(scriptFor("ENQUEUE"), rowAndPending("q", id), [id, "x"]),
      "WRONGTYPE Operation against a key holding the wrong kind of value",
    );
    assert.deepEqual(await dumpQueue(server, "q"), { "emq:{q}:pending": { type: "string" } });
  });

  test("CLAIM: shape, lease values, orphan heads, head gates, wrong type — exact texts, nothing written by a refusal", async () => {
    const { conn, server } = ctx();
    const form = "EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>";
    await refused(
      () => conn.eval(scriptFor("CLAIM"), claimKeys("q").slice(0, 2), ["1000"]),
      `ERR EMQ.CLAIM wrong number of keys: ${form}`,
    );
    await refused(
      () => conn.eval(scriptFor("CLAIM"), claimKeys("q"), []),
      `ERR EMQ.CLAIM wrong number of values: ${form}`,
    );
    for (const lease of ["0", "-5", "01", "1.5", "abc", "", "1234567890123456"]) {
      await refused(
        () => conn.eval(scriptFor("CLAIM"), claimKeys("q"), [lease]),
        "ERR EMQ.CLAIM lease must be a positive integer of milliseconds",
      );
    }
    // An orphan head (not a JOB id, or no row) is no refusal: dropped and counted, nothing to claim.
    await server.cli("ZADD", queueKey("q", "pending"), "0", "NOTAJOB", "1", newId());
    assert.deepEqual(await conn.eval(scriptFor("CLAIM"), claimKeys("q"), ["1000"]), []);
    assert.deepEqual(await dumpQueue(server, "q"), { "emq:{q}:meta": { orphans: "2" } });
    const orphan = newId();
    await server.cli("ZADD", queueKey("q", "pending"), "0", orphan);
    await server.cli("HSET", `emq:{q}:job:${orphan}`, "state", "active", "attempts", "1", "payload", "p");
    await server.cli("ZADD", queueKey("q", "active"), "5", orphan);
    await refused(
      () => conn.eval(scriptFor("CLAIM"), claimKeys("q"), ["1000"]),
      "ERR EMQ.CLAIM pending head is already active",
    );
    assert.deepEqual(await server.cli("ZSCORE", queueKey("q", "active"), orphan), "5", "nothing moved");
    await server.cli("DEL", queueKey("q", "active"), `emq:{q}:job:${orphan}`);
    await server.cli("SET", queueKey("q", "active"), "x");
    await refused(
      () => conn.eval(scriptFor("CLAIM"), claimKeys("q"), ["1000"]),
      "WRONGTYPE Operation against a key holding the wrong kind of value",
    );
    assert.deepEqual(await dumpQueue(server, "q"), {
      "emq:{q}:active": { type: "string" },
      "emq:{q}:meta": { orphans: "2" },
      "emq:{q}:pending": [orphan, "0"],
    });
  });
});

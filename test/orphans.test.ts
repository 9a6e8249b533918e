/**
 * Orphans never block a queue, on both wires: a claim drops the pending ids that are not `JOB` ids
 * or have no hash row (at most 100 per call), counts them in `meta` `orphans`, and claims the
 * first real job; a refusal drops nothing; `remove` takes out an id whose row is gone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ServerError } from "../src/index.js";
import {
  claim,
  enqueue,
  jobKey,
  newId,
  queueKey,
  type QueueKeyType,
  remove,
  scriptFor,
} from "../src/protocol.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
const k = (q: string, type: QueueKeyType) => queueKey(q, type);

forEachWire("orphans", (ctx) => {
  const cli = (...args: (string | number)[]) => ctx().server.cli(...args);
  const dump = (q: string) => dumpQueue(ctx().server, q);

  /** `n` orphans ahead of every job (score -1), of the three kinds in turn; their ids in order. */
  async function orphans(q: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const kind = i % 3;
      const id = kind === 0 ? `XYZ${String(i).padStart(11, "0")}` : newId();
      if (kind === 2) await cli("SET", jobKey(q, id), "not a hash");
      await cli("ZADD", k(q, "pending"), "-1", id);
      ids.push(id);
    }
    return ids.sort();
  }

  async function refusedUnchanged(q: string, run: () => Promise<unknown>, text: string): Promise<void> {
    const before = await dump(q);
    await assert.rejects(run(), (e: unknown) => e instanceof ServerError && e.message === text);
    assert.deepEqual(await dump(q), before, `unchanged after ${text}`);
  }

  test("orphans of every kind ahead of a job: dropped and counted, the job claimed", async () => {
    const { conn } = ctx();
    const { id } = await enqueue(conn, "o1", "real");
    await orphans("o1", 3);
    const job = await claim(conn, "o1", 30_000);
    assert.equal(job?.id, id);
    assert.equal(job.payload.toString(), "real");
    assert.equal(await cli("EXISTS", k("o1", "pending")), 0, "pending holds no orphan any more");
    assert.deepEqual(await cli("HGETALL", k("o1", "meta")), ["orphans", "3"]);
    assert.equal(await claim(conn, "o1", 30_000), null);
    assert.deepEqual(await cli("HGETALL", k("o1", "meta")), ["orphans", "3"], "nothing more counted");
  });

  test("only orphans: null, with them dropped and counted (a claim that dropped orphans is no refusal)", async () => {
    const { conn } = ctx();
    await orphans("o2", 4);
    assert.equal(await claim(conn, "o2", 30_000), null);
    const after = await dump("o2");
    assert.deepEqual(after["emq:{o2}:meta"], { orphans: "4" });
    assert.equal(after["emq:{o2}:pending"], undefined);
    const strings = Object.entries(after).filter(([, v]) => JSON.stringify(v) === '{"type":"string"}');
    assert.equal(strings.length, 1, "a row that is not a hash stays: only its id leaves pending");
  });

  test("at most 100 orphans per call: 101 ahead of a job → null, then the job; 100 ahead → the job at once", async () => {
    const { conn } = ctx();
    const { id } = await enqueue(conn, "o3", "x");
    const ids = await orphans("o3", 101);
    assert.equal(await claim(conn, "o3", 30_000), null);
    assert.deepEqual(await cli("HGET", k("o3", "meta"), "orphans"), "100");
    assert.deepEqual(await cli("ZRANGE", k("o3", "pending"), "0", "-1"), [ids[100], id]);
    assert.equal((await claim(conn, "o3", 30_000))?.id, id);
    assert.deepEqual(await cli("HGET", k("o3", "meta"), "orphans"), "101");

    const { id: next } = await enqueue(conn, "o4", "x");
    await orphans("o4", 100);
    assert.equal((await claim(conn, "o4", 30_000))?.id, next);
    assert.deepEqual(await cli("HGET", k("o4", "meta"), "orphans"), "100");
  });

  test("the count: HINCRBY on a count, started over on any other text; other meta fields kept", async () => {
    const { conn } = ctx();
    await cli("HSET", k("o5", "meta"), "orphans", "41", "other", "v");
    await orphans("o5", 2);
    assert.equal(await claim(conn, "o5", 30_000), null);
    assert.deepEqual(await dump("o5"), { "emq:{o5}:meta": { orphans: "43", other: "v" } });
    for (const junk of ["x", "-1", "01", "1234567890123456"]) {
      await cli("HSET", k("o6", "meta"), "orphans", junk);
      await orphans("o6", 2);
      assert.equal(await claim(conn, "o6", 30_000), null);
      assert.equal(await cli("HGET", k("o6", "meta"), "orphans"), "2", `after ${JSON.stringify(junk)}`);
    }
  });

  test("a refusal drops nothing: the head already active, its attempts malformed, active not a sorted set", async () => {
    const { conn } = ctx();
    const { id } = await enqueue(conn, "o7", "x");
    await cli("ZADD", k("o7", "active"), "5", id);
    await orphans("o7", 2);
    await refusedUnchanged(
      "o7",
      () => claim(conn, "o7", 30_000),
      "ERR EMQ.CLAIM pending head is already active",
    );
    await cli("ZREM", k("o7", "active"), id);
    await cli("HSET", jobKey("o7", id), "attempts", "x");
    await refusedUnchanged(
      "o7",
      () => claim(conn, "o7", 30_000),
      "ERR EMQ.CLAIM job row has no integer attempts",
    );
    await cli("HSET", jobKey("o7", id), "attempts", "0");
    await cli("SET", k("o7", "active"), "x");
    await refusedUnchanged("o7", () => claim(conn, "o7", 30_000), WRONGTYPE);
    await cli("DEL", k("o7", "pending"));
    await orphans("o7", 2);
    await refusedUnchanged("o7", () => claim(conn, "o7", 30_000), WRONGTYPE);
  });

  test("meta not a hash with orphans ahead: WRONGTYPE, nothing dropped (the host's pause read; the raw verb too)", async () => {
    const { conn } = ctx();
    await enqueue(conn, "o8", "x");
    await orphans("o8", 2);
    await cli("SET", k("o8", "meta"), "x");
    await refusedUnchanged("o8", () => claim(conn, "o8", 30_000), WRONGTYPE);
    const keys = [k("o8", "pending"), k("o8", "active"), k("o8", "")];
    await refusedUnchanged("o8", () => conn.eval(scriptFor("CLAIM"), keys, ["30000"]), WRONGTYPE);
  });

  test("remove of an id whose row is gone: out of pending, schedule, done and dead (not active); 1 if any held it", async () => {
    const { conn } = ctx();
    const { id } = await enqueue(conn, "o9", "x");
    await cli("DEL", jobKey("o9", id));
    for (const set of ["schedule", "done", "dead"] as const) await cli("ZADD", k("o9", set), "7", id);
    assert.equal(await remove(conn, "o9", id), true);
    assert.deepEqual(await dump("o9"), {});
    assert.equal(await remove(conn, "o9", id), false, "no set holds it any more");

    const leased = newId();
    await cli("ZADD", k("o9", "active"), "5", leased);
    const before = await dump("o9");
    assert.equal(await remove(conn, "o9", leased), false, "active is REAP's to clean");
    assert.deepEqual(await dump("o9"), before);
  });
});

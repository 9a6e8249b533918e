/**
 * The native module under replication: a wire-6 batch leaves no EMQ.* record in the AOF, the
 * replica holds the same keyspace, and a restart reloads it. The module's own timers on replicas:
 * module.timers.replication.test.ts.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { modulePath } from "../tools/module-path.js";
import { connect } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { claim, enqueue } from "../src/protocol.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { dumpAll, replicated, runId, VERBS } from "./support/module.js";

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

/**
 * The wake is a shard-channel message (`SPUBLISH emq:{q}:wake <n>`), on both wires, on one node:
 * a shard subscriber gets it, a plain or pattern subscriber does not; a replica's shard
 * subscriber gets it too (the wake is replicated as `SPUBLISH`), the AOF never holds it; a drain
 * over `maxmemory` still publishes; a caller without the channel grant still gets the
 * transition. The same on a cluster node: `cluster-executors.test.ts`.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "iovalkey";
import { modulePath } from "../tools/module-path.js";
import { claim, fail, enqueue } from "../src/protocol.js";
import { connect, type Wire } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { startValkey, type StartValkeyOptions, type ValkeyServer } from "./support/valkey.js";
import { WIRES } from "./support/wires.js";
import { until } from "./support/until.js";
import { V } from "./support/module.js";

/** What `subscribe` hears: shard messages (`smessage`) and plain or pattern ones (`message`). */
interface Heard {
  shard: string[];
  plain: string[];
}

/** Subscribes on `port` to `channel` with SSUBSCRIBE, SUBSCRIBE and PSUBSCRIBE (three sockets). */
async function listen(port: number, channel: string) {
  const heard: Heard = { shard: [], plain: [] };
  const clients = [0, 1, 2].map(() => new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 }));
  for (const c of clients) {
    c.on("error", () => {});
    await c.connect();
  }
  const [shard, plain, pattern] = clients as [Redis, Redis, Redis];
  shard.on("smessage", (_c: string, m: string) => heard.shard.push(m));
  plain.on("message", (_c: string, m: string) => heard.plain.push(m));
  pattern.on("pmessage", (_p: string, _c: string, m: string) => heard.plain.push(m));
  await shard.ssubscribe(channel);
  await plain.subscribe(channel);
  await pattern.psubscribe("emq:*");
  return {
    heard,
    async until(n: number): Promise<void> {
      await until(
        () => `${n} shard message(s), got ${heard.shard}`,
        () => heard.shard.length >= n,
      );
      await sleep(50); // anything else that was coming has come
    },
    async close(): Promise<void> {
      for (const c of clients) c.disconnect();
    },
  };
}

/** A server for `wire` (wire 6: the module, branded). */
async function serverFor(wire: Wire, opts: StartValkeyOptions = {}): Promise<ValkeyServer> {
  const server = await startValkey(wire === 6 ? { ...opts, module: modulePath() } : opts);
  if (wire === 6) await installModuleBrand({ port: server.port });
  return server;
}

function aofText(server: ValkeyServer): string {
  const dir = join(server.dir, "appendonlydir");
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f)).toString("latin1"))
    .join("");
}

for (const wire of WIRES) {
  describe(`the wake on a shard channel [wire ${wire}]`, () => {
    test("a shard subscriber on the primary and on its replica get it; SUBSCRIBE and PSUBSCRIBE do not; the AOF holds no SPUBLISH", async () => {
      const primary = await serverFor(wire, { aof: true });
      const replica = await startValkey({
        ...(wire === 6 ? { module: modulePath() } : {}),
        replicaOf: { host: "127.0.0.1", port: primary.port },
      });
      const conn = await connect({ port: primary.port, wire });
      const [onPrimary, onReplica] = [
        await listen(primary.port, "emq:{w}:wake"),
        await listen(replica.port, "emq:{w}:wake"),
      ];
      try {
        await enqueue(conn, "w", "a");
        await enqueue(conn, "w", "b");
        await onPrimary.until(2);
        await onReplica.until(2);
        assert.deepEqual(onPrimary.heard, { shard: ["1", "1"], plain: [] });
        assert.deepEqual(onReplica.heard, { shard: ["1", "1"], plain: [] });
        const aof = aofText(primary);
        assert.match(aof, /ZADD/, "the enqueues are in the AOF");
        assert.doesNotMatch(aof, /PUBLISH/i, "the wake is not");
      } finally {
        await onPrimary.close();
        await onReplica.close();
        await conn.close();
        await replica.stop();
        await primary.stop();
      }
    });

    test("over maxmemory a drain (FAIL back to pending) still publishes its wake", async () => {
      const server = await serverFor(wire);
      const conn = await connect({ port: server.port, wire });
      const sub = await listen(server.port, "emq:{m}:wake");
      try {
        await enqueue(conn, "m", "a");
        const job = (await claim(conn, "m", 30_000))!;
        await server.cli("CONFIG", "SET", "maxmemory", 1);
        await assert.rejects(server.cli("SET", "probe", "x"), { message: /^OOM / });
        const state = await fail(conn, "m", job.id, job.attempts, "e", {
          backoffMs: 0,
          maxAttempts: 5,
          keep: 5,
        });
        assert.equal(state, "pending");
        await sub.until(2);
        assert.deepEqual(sub.heard.shard, ["1", "1"]);
      } finally {
        await server.cli("CONFIG", "SET", "maxmemory", 0).catch(() => {});
        await sub.close();
        await conn.close();
        await server.stop();
      }
    });

    test("a caller without the channel grant: the transition runs and answers as always", async () => {
      const user = `user u on >pw ~emq:{g}:* %R~${V} resetchannels +@all`;
      const server = await serverFor(wire, { acl: [user] });
      const admin = await connect({ port: server.port, wire }); // wire 4: brands the node
      const u = await connect({ port: server.port, wire, username: "u", password: "pw" });
      const sub = await listen(server.port, "emq:{g}:wake");
      try {
        assert.match((await enqueue(u, "g", "a")).id, /^JOB/);
        assert.equal(await server.cli("ZCARD", "emq:{g}:pending"), 1);
        await enqueue(admin, "g", "b"); // granted every channel: its wake marks the end
        // The script's SPUBLISH is refused by the ACL (redis.pcall: ignored, nothing published);
        // the module publishes through the module API, which checks no channel permission.
        await sub.until(wire === 6 ? 2 : 1);
        assert.deepEqual(sub.heard.shard, wire === 6 ? ["1", "1"] : ["1"]);
        assert.equal(await server.cli("ZCARD", "emq:{g}:pending"), 2);
      } finally {
        await sub.close();
        await u.close();
        await admin.close();
        await server.stop();
      }
    });
  });
}

/**
 * Start-up and outages (both wires): `connect({ waitForServerMs })` waits for a server that is
 * not up yet, within its bound; during an outage a call fails at once with
 * `ConnectionLostError` saying it was not sent (nothing written), a call cut in flight says it
 * may have been written; an add retried with the same id after either is exact.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConnectionLostError, connect, ServerUnreachableError } from "../src/index.js";
import { enqueue, newId } from "../src/protocol.js";
import { installModuleBrand } from "../src/admin.js";
import { modulePath } from "../tools/module-path.js";
import { type FaultProxy, startProxy } from "./support/proxy.js";
import { until } from "./support/until.js";
import { freePort, startValkey, type ValkeyServer } from "./support/valkey.js";

/** The retry of the pattern: the same add again until the connection carries it. */
async function addOnceBack<T>(add: () => Promise<T>): Promise<T | undefined> {
  let result: T | undefined;
  await until("the add went through", async () => {
    result = await add().catch(() => undefined);
    return result !== undefined;
  });
  return result;
}

for (const wire of [4, 6] as const) {
  describe(`start-up and outages [wire ${wire}]`, () => {
    let server: ValkeyServer;
    let proxy: FaultProxy;
    before(async () => {
      server = await startValkey(wire === 6 ? { module: modulePath() } : {});
      if (wire === 6) await installModuleBrand({ port: server.port });
      proxy = await startProxy({ targetPort: server.port });
    });
    after(async () => {
      await proxy?.close();
      await server?.stop();
    });

    test("waitForServerMs: connect() tries again while the server refuses, and connects once it answers", async () => {
      const refusing = proxy.refuse(800);
      const refusedBefore = proxy.stats.refused;
      const conn = await connect({ port: proxy.port, wire, waitForServerMs: 60_000 });
      await refusing;
      assert.ok(proxy.stats.refused > refusedBefore, "it tried while the server refused");
      assert.equal((await enqueue(conn, "up", "x")).duplicate, false);
      await conn.close();
    });

    test("an outage: a call fails at once, not sent and nothing written; after the outage the same id adds the job", async () => {
      const conn = await connect({ port: proxy.port, wire });
      let over = false;
      const refusing = proxy.refuse(3000).then(() => {
        over = true;
      });
      proxy.cut();
      const id = newId();
      const mark = proxy.mark();
      let err: unknown;
      await until("a call refused as not sent", async () => {
        err = await enqueue(conn, "down", "x", { id }).then(
          () => undefined,
          (e: unknown) => (e instanceof ConnectionLostError && !e.sent ? e : undefined),
        );
        return err !== undefined;
      });
      assert.ok(err instanceof ConnectionLostError, "a call during the outage failed, not sent");
      assert.equal(over, false, "it failed while the server was still unreachable, without waiting it out");
      assert.equal(err.sent, false);
      assert.equal(err.retryable, true);
      assert.match(
        err.message,
        /^connection down, nothing written: valkey at 127\.0\.0\.1:\d+ is unreachable/,
      );
      assert.match(err.message, /was not sent/);
      const sent = proxy.since(mark, true).filter((c) => c.args.includes(id));
      assert.deepEqual(sent, [], "the id never reached the proxy");
      await refusing;
      const added = await addOnceBack(() => enqueue(conn, "down", "x", { id }));
      assert.deepEqual(added, { id, duplicate: false }, "not written before, so the retry adds it");
      await conn.close();
    });

    test("a call cut in flight: sent, outcome unknown; retried with the same id it is exact (a duplicate if it ran)", async () => {
      const conn = await connect({ port: proxy.port, wire });
      const id = newId();
      const swallowed = proxy.swallowNext((args) => args.includes(id));
      await assert.rejects(enqueue(conn, "cut", "x", { id }), (e: unknown) => {
        assert.ok(e instanceof ConnectionLostError, String(e));
        assert.equal(e.sent, true);
        assert.match(e.message, /outcome unknown.*may have been written.*same id or key/);
        return true;
      });
      await swallowed;
      const again = await addOnceBack(() => enqueue(conn, "cut", "x", { id }));
      assert.equal(again?.id, id);
      assert.equal(await server.cli("EXISTS", `emq:{cut}:job:${id}`), 1, "exactly one job with that id");
      await conn.close();
    });
  });
}

describe("waitForServerMs: the bound", () => {
  test("nothing ever listens: ServerUnreachableError after more than one try, naming the bound", async () => {
    const port = await freePort();
    await assert.rejects(connect({ port, waitForServerMs: 700 }), (e: unknown) => {
      assert.ok(e instanceof ServerUnreachableError, String(e));
      assert.ok(e.tries > 1, `tries ${e.tries}`);
      assert.match(e.message, /connection refused .*\(waitForServerMs 700\); tried \d+ times in \d+ ms/);
      return true;
    });
  });

  test("out of range is refused before any socket opens", async () => {
    for (const bad of [-1, 1.5]) {
      await assert.rejects(
        connect({ port: 1, waitForServerMs: bad }),
        /invalid waitForServerMs: must be an integer from 0 to 2147483647/,
      );
    }
    // a value of the wrong kind is refused by the options' key check, which names its kind
    await assert.rejects(
      connect({ port: 1, waitForServerMs: "10" as never }),
      /invalid waitForServerMs: must be a number, got string "10"/,
    );
  });
});

/**
 * Flows and the module's own timers (wire 6, one node, no worker): a flow child whose lease
 * expires on its last attempt is buried by the node's reaper — the code `EMQ.REAP` runs — with its
 * outbox entry; a relay then kills the parent, naming the child.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { claim } from "../src/protocol.js";
import { type Connection, connect, FlowProducer, Queue } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { Relay } from "../src/flows/relay.js";
import { modulePath } from "../tools/module-path.js";
import { until } from "./support/until.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

let server: ValkeyServer;
let conn: Connection;
before(async () => {
  server = await startValkey({ module: modulePath() });
  await installModuleBrand({ port: server.port });
  conn = await connect({ port: server.port, wire: 6 });
});
after(async () => {
  await conn.close();
  await server.stop();
});

test("the node's reaper buries a flow child with its outbox entry; the relay kills the parent", async () => {
  const node = await new FlowProducer(conn).add({
    queue: "tp",
    payload: "p",
    children: [{ queue: "tc", payload: "c", opts: { maxAttempts: 1 } }],
  });
  const child = node.children[0]!;
  const leased = await claim(conn, "tc", 50);
  assert.equal(leased?.id, child.id);
  await until(
    "the node reaped the child",
    async () => Number(await server.cli("ZCARD", "emq:{tc}:outbox")) === 1,
    10_000,
  );
  const [entry] = (await server.cli("ZRANGE", "emq:{tc}:outbox", 0, -1)) as string[];
  assert.equal(entry, `tp\0${node.id}\0${child.id}\0failed\0lease expired`);
  assert.equal(await server.cli("HGET", `emq:{tc}:job:${child.id}`, "state"), "dead");
  const relay = new Relay(
    conn,
    "tc",
    { batch: 10, everyMs: 60_000, pokeMs: 5 },
    { error: (e) => assert.fail(String(e)) },
  );
  assert.deepEqual(await relay.round(), { relayed: 1, more: false });
  const parent = await new Queue("tp", conn).getJob(node.id);
  assert.equal(parent?.state, "dead");
  assert.equal(parent?.error, `child tc:${child.id} failed: lease expired`);
});

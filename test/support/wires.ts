/**
 * One suite, two engines: `forEachWire` runs the same tests on wire 4 (a stock server, Lua
 * scripts) and wire 6 (a server with the module, branded by EMQ.INSTALL).
 *
 * The wire-6 server runs with the module's own timers off (`echomq.timers no`, so `EMQ.VERSION`
 * lists no `timers` feature and workers run their own loops, as on wire 4): the suite holds the
 * verbs and the host's housekeeping to one contract, and a server tick promoting or reaping
 * between a test's steps would race what it asserts. The server timers have their own tests
 * (`test/module.timers.test.ts`).
 */
import { after, before, beforeEach, describe } from "node:test";
import { modulePath } from "../../tools/module-path.js";
import { type Connection, connect, type Wire } from "../../src/index.js";
import { installModuleBrand } from "../../src/admin.js";
import { VERSION_KEY } from "../../src/protocol.js";
import { plainDump, plainValue, readDump } from "./dump.js";
import { startValkey, type ValkeyServer } from "./valkey.js";
import { queueKey as keyText } from "../../src/keyspace.js";

export interface WireContext {
  wire: Wire;
  server: ValkeyServer;
  conn: Connection;
}

export const WIRES: readonly Wire[] = [4, 6];

/** Module arguments that switch the module's own timers off. */
export const NO_SERVER_TIMERS = ["timers", "no"];

/** Fresh server per wire; the keyspace is flushed (brand kept) before each test. */
export function forEachWire(title: string, body: (ctx: () => WireContext) => void): void {
  for (const wire of WIRES) {
    describe(`${title} [wire ${wire}]`, () => {
      let ctx: WireContext | undefined;
      before(async () => {
        const server = await startValkey(
          wire === 6 ? { module: modulePath(), moduleArgs: NO_SERVER_TIMERS } : {},
        );
        if (wire === 6) await installModuleBrand({ port: server.port });
        const conn = await connect({ port: server.port, wire });
        ctx = { wire, server, conn };
      });
      after(async () => {
        await ctx?.conn.close();
        await ctx?.server.stop();
      });
      beforeEach(async () => {
        const { server } = ctx!;
        const brand = await server.cli("GET", VERSION_KEY);
        await server.cli("FLUSHALL", "SYNC");
        await server.cli("SET", VERSION_KEY, String(brand));
      });
      body(() => ctx!);
    });
  }
}

/**
 * Every key under a queue's hashtag, for field-by-field comparisons: a hash as an object, a zset as
 * `[member, score, …]`, any other type as `{ type }`. The queue's events stream is left out unless
 * `events` is set: these dumps check a transition's state, the bus has tests of its own
 * (`test/events.test.ts`, the harness).
 */
export async function dumpQueue(
  server: ValkeyServer,
  queue: string,
  o: { events?: boolean } = {},
): Promise<Record<string, unknown>> {
  const dump = await readDump(server.port, (keys) =>
    keys.dumpQueues([Buffer.from(queue).toString("latin1")]),
  );
  if (!o.events) dump.delete(Buffer.from(keyText(queue, "events")).toString("latin1"));
  return plainDump(dump, "utf8", (value) =>
    value.type === "hash" || value.type === "zset" ? plainValue(value, "utf8") : { type: value.type },
  );
}

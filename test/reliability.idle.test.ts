/**
 * An idle Worker on both wires does not busy-poll, and a new job wakes it at once.
 *
 * Every wait is a bounded poll for a condition; fixed sleeps only open measurement windows.
 * Measured numbers are reported with `t.diagnostic` (shown by the spec reporter).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue, Worker } from "../src/index.js";
import { forEachWire } from "./support/wires.js";
import { until } from "./support/until.js";
import { infoField, commandCalls, noErrors, sum, idleSlots, shut } from "./support/reliability.js";

forEachWire("worker reliability: idle", (ctx) => {
  test("an idle worker does not busy-poll, and a new job wakes it at once", {
    timeout: 60_000,
  }, async (t) => {
    const { conn, server, wire } = ctx();
    const q = "idle";
    const queue = new Queue(q, conn);
    const CONCURRENCY = 50;
    const WINDOW_MS = 3000;
    let w: Worker | undefined;
    const wConn = await conn.duplicate();
    try {
      let ran: { id: string; at: number } | undefined;
      w = new Worker(
        new Queue(q, wConn),
        (job) => {
          ran ??= { id: job.id, at: Date.now() };
        },
        // The safety tick is a minute away: only a wake message can start a slot in this test.
        { concurrency: CONCURRENCY, idleCheckMs: 60_000 },
      );
      const errors: unknown[] = [];
      w.on("error", (err) => errors.push(err));
      const tStart = Date.now();
      await w.ready;
      // Each slot tried one claim at start, found nothing and now waits on the gate.
      await until("every slot to idle", () => idleSlots(w!) === CONCURRENCY, 10_000, 5);
      const settleMs = Date.now() - tStart;

      const stats0 = await server.cli("INFO", "commandstats");
      const total0 = infoField(await server.cli("INFO", "stats"), "total_commands_processed");
      await sleep(WINDOW_MS); // the measurement window
      const total1 = infoField(await server.cli("INFO", "stats"), "total_commands_processed");
      const stats1 = await server.cli("INFO", "commandstats");
      // A command is counted once it has run: total1 includes the INFO that read total0, and
      // nothing else of this test's (Lua scripts' own calls count too, on wire 4).
      const idleCommands = total1 - total0 - 1;
      const calls0 = commandCalls(stats0);
      const perCommand = [...commandCalls(stats1)]
        .map(([name, n]) => [name, n - (calls0.get(name) ?? 0)] as const)
        .filter(([name, n]) => n > 0 && name !== "info");
      const counted = sum(perCommand.map(([, n]) => n));
      assert.ok(idleCommands <= 25, `an idle worker sent ${idleCommands} commands in ${WINDOW_MS} ms`);
      assert.equal(idleSlots(w), CONCURRENCY, "no slot left the gate while idle");

      // A job added now runs promptly: the add publishes a wake message.
      const t0 = Date.now();
      const { id } = await queue.add("wake up");
      await until("the handler to run", () => ran !== undefined, 2000, 2);
      const latency = ran!.at - t0;
      assert.equal(ran!.id, id);
      assert.ok(latency <= 2000, `the handler ran ${latency} ms after add`);
      await until("the job to complete", async () => (await queue.counts()).completed === 1, 5000);
      const tClose = Date.now();
      await w.close();
      const closeMs = Date.now() - tClose;
      assert.ok(closeMs < 2000, `close() of an idle worker took ${closeMs} ms`);
      noErrors(errors);
      t.diagnostic(
        `wire ${wire}: ready and idle after ${settleMs} ms; idle ${CONCURRENCY} slots for ${WINDOW_MS} ms: ` +
          `${idleCommands} commands (${((idleCommands * 1000) / WINDOW_MS).toFixed(1)}/s; commandstats ` +
          `${JSON.stringify(Object.fromEntries(perCommand))} = ${counted}); wake-to-handler ${latency} ms; ` +
          `close() ${closeMs} ms`,
      );
    } finally {
      await shut(w, wConn);
    }
  });
});

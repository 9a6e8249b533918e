/**
 * A cut between a fused settlement (`COMPLETENEXT`, `FAILNEXT`) and its reply must not idle the
 * worker.
 *
 * When the call's reply is lost (the server ran it) or the call itself is (it never ran), the
 * slot sends the plain completion again and the job completes once; the job a lost reply leased
 * comes back when its lease ends. What the slot must not do is take the missing reply for "the
 * lane is empty": marked empty, the lane is skipped until a wake or the safety tick's probe
 * (`idleCheckMs`), and once the other slots' completions see it empty too, every slot of a wire-4
 * worker (no blocking claim waiting inside the server) sits idle over a backlog — 2 s at the
 * default tick, a minute here. The worker here has a long tick and a long lease, so nothing but
 * the slot loop itself can bring the backlog back within the bound.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { connect, Queue, Worker } from "../src/index.js";
import { scriptFor } from "../src/scripts/index.js";
import { startProxy } from "./support/proxy.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

const sha = scriptFor("COMPLETENEXT").sha1;
const isCompleteNext = (a: string[]) =>
  a[0]?.toUpperCase() === "EMQ.COMPLETENEXT" || (a[0]?.toUpperCase() === "EVALSHA" && a[1] === sha);

forEachWire("a cut between COMPLETENEXT and its reply", (ctx) => {
  for (const way of ["reply lost (the server ran it)", "call lost (it never ran)"] as const) {
    test(`${way}: the worker goes on over the backlog, each job completes once`, async () => {
      const { server, conn, wire } = ctx();
      const proxy = await startProxy({ targetPort: server.port });
      const q = new Queue("fc", conn);
      const jobs = 1000;
      const added = await q.addBulk(Array.from({ length: jobs }, (_, i) => ({ payload: `j${i}` })));
      const workerConn = await connect({ port: proxy.port, wire });
      const completed: string[] = [];
      const runs = new Map<string, number>();
      const worker = new Worker(
        new Queue("fc", workerConn),
        async (job) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
          await sleep(5);
        },
        {
          concurrency: 4,
          leaseMs: 60_000,
          idleCheckMs: 60_000,
          keepCompleted: 10_000,
          logger: { warn: () => {} },
        },
      );
      worker.on("completed", (job) => completed.push(job.id));
      worker.on("error", () => {});
      try {
        await until("10 completions", () => completed.length >= 10, 30_000);
        const cut = way.startsWith("reply")
          ? proxy.loseReplyOf(isCompleteNext)
          : proxy.swallowNext(isCompleteNext);
        const command = await cut;
        const lostCall = "command" in command ? command.command : command;
        assert.equal(lostCall.forwarded, way.startsWith("reply"), "the call reached the server, or did not");
        const before = completed.length;
        const left = (await q.counts()).pending;
        assert.ok(left >= 100, `a backlog at the cut (${left} pending): there is work to go on with`);
        // Well under the lease and the tick: only the slots themselves can make this.
        await until("40 more completions after the cut", () => completed.length >= before + 40, 15_000);
      } finally {
        await worker.close();
        await workerConn.close();
        await proxy.close();
      }
      // Each job ran at most once; none completed twice on the server.
      assert.deepEqual(
        [...runs].filter(([, n]) => n > 1),
        [],
      );
      assert.equal(new Set(completed).size, completed.length, "no job reported completed twice");
      const states = await Promise.all(completed.map((id) => q.getJob(id)));
      assert.ok(states.every((j) => j?.state === "completed"));
      assert.ok(added.length === jobs);
    });
  }
});

const failSha = scriptFor("FAILNEXT").sha1;
const isFailNext = (a: string[]) =>
  a[0]?.toUpperCase() === "EMQ.FAILNEXT" || (a[0]?.toUpperCase() === "EVALSHA" && a[1] === failSha);

forEachWire("a cut between FAILNEXT and its reply", (ctx) => {
  test("reply lost (the server ran it): the worker goes on failing the backlog, each job once", async () => {
    const { server, conn, wire } = ctx();
    const proxy = await startProxy({ targetPort: server.port });
    const q = new Queue("ff", conn);
    await q.addBulk(Array.from({ length: 1000 }, (_, i) => ({ payload: `j${i}` })));
    const workerConn = await connect({ port: proxy.port, wire });
    const failed: string[] = [];
    const worker = new Worker(
      new Queue("ff", workerConn),
      async () => {
        await sleep(5);
        throw new Error("no");
      },
      // One attempt: each failure is the job's last (dead), so none comes back to run again.
      { concurrency: 4, attempts: 1, leaseMs: 60_000, idleCheckMs: 60_000, logger: { warn: () => {} } },
    );
    worker.on("failed", (job) => failed.push(job.id));
    worker.on("error", () => {});
    try {
      await until("10 failures", () => failed.length >= 10, 30_000);
      const { command } = await proxy.loseReplyOf(isFailNext);
      assert.equal(command.forwarded, true);
      const before = failed.length;
      const left = (await q.counts()).pending;
      assert.ok(left >= 100, `a backlog at the cut (${left} pending)`);
      await until("40 more failures after the cut", () => failed.length >= before + 40, 15_000);
    } finally {
      await worker.close();
      await workerConn.close();
      await proxy.close();
    }
    assert.equal(new Set(failed).size, failed.length, "no job reported failed twice");
  });
});

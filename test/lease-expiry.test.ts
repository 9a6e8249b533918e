/**
 * A claim whose lease ran out before its handler could start is handed back, not run. A worker in
 * a child process (lease 1 s) is frozen with SIGSTOP while its claim of a job is answered — wire
 * 6: it waits in `EMQ.BCLAIM`, which leases it the job the moment it is added; wire 4: a proxy
 * holds its scripted claim until it is frozen, then lets it through. The lease runs out, a second
 * worker takes the job back and runs it; the frozen worker is thawed (SIGCONT) while that run is
 * held open. It must not start the handler (two runs of one job at once); it reports the lease
 * lost with `LeaseExpiredError`, and the job completes once, by the second worker.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { claim } from "../src/index.js";
import { queueKey } from "../src/keyspace.js";
import {
  blockedClients,
  expiredClaim,
  type FrozenWorker,
  startFrozenWorker,
} from "./support/frozen-worker.js";
import { type FaultProxy, startProxy } from "./support/proxy.js";
import { until } from "./support/until.js";
import { forEachWire } from "./support/wires.js";

/** The scripted claim of `queue` (`EVALSHA <sha> 3 <pending> <active> <row prefix> <leaseMs>`). */
const claimOf = (queue: string) => (args: string[]) =>
  args[0]?.toUpperCase() === "EVALSHA" &&
  args[2] === "3" &&
  args[3] === queueKey(queue, "pending") &&
  args[4] === queueKey(queue, "active");

forEachWire("a claim answered while its worker was frozen", (ctx) => {
  let child: FrozenWorker | undefined;
  let proxy: FaultProxy | undefined;
  after(async () => {
    await child?.stop();
    await proxy?.close();
  });

  test("is handed back once its lease is out: the handler never runs twice at once", {
    timeout: 120_000,
  }, async () => {
    const { server, wire, conn } = ctx();
    const queue = "frozen";
    if (wire === 4) proxy = await startProxy({ targetPort: server.port });
    child = await startFrozenWorker({ port: proxy?.port ?? server.port }, wire, queue);
    const frozen = child;
    const run = await expiredClaim(conn, queue, frozen, async (q) => {
      if (!proxy) {
        await until(
          "the worker's wait in EMQ.BCLAIM",
          async () => (await blockedClients(conn, queueKey(queue, ""))) > 0,
        );
        frozen.freeze();
        return (await q.add("once")).id;
      }
      await claim(conn, queue, 1000); // the claim script is loaded: the held EVALSHA will not meet NOSCRIPT
      const held = proxy.holdFrom(claimOf(queue));
      const { id } = await q.add("once");
      await held;
      frozen.freeze();
      proxy.release();
      return id;
    });
    assert.deepEqual(run.frozen, ["lost 1 LeaseExpiredError"], "the frozen worker never started the handler");
    assert.deepEqual(run.second, ["start 2", "end"], "the second worker ran it once");
    assert.equal(run.state, "completed");
    assert.equal(run.attempts, 2);
  });
});

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
import { LeaseExpiredError, LeaseLostError, Queue } from "../src/index.js";
import { claim, type ClaimedJob } from "../src/protocol.js";
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
import { LeaseCheck } from "../src/worker/lease-check.js";

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

  test("the check itself: over → handed back; under half → renewed first, run only if granted", async () => {
    const { server, conn } = ctx();
    const queue = "checked";
    const lease = 20_000;
    const faults: unknown[] = [];
    const check = new LeaseCheck(conn, lease, (err) => faults.push(err));
    await new Queue(queue, conn).add("a");
    const claimed = (await claim(conn, queue, lease)) as ClaimedJob;
    const score = async () => Number(await server.cli("ZSCORE", queueKey(queue, "active"), claimed.id));
    // Seen as claimed a whole lease and a second ago: over, by about a second.
    const over = await check.before(queue, { ...claimed, deadline: claimed.deadline - lease - 1000 });
    assert.equal(over.start, false);
    assert.ok(!over.start && over.handBack && over.error instanceof LeaseExpiredError, String(over));
    assert.match(String(over.error), /reached its worker \d+ ms after its 20000 ms lease had ended/);
    assert.equal(await score(), claimed.deadline, "nothing was written");
    // Seen as claimed three quarters of a lease ago: renewed (the deadline moves on), then run.
    const late = await check.before(queue, { ...claimed, deadline: claimed.deadline - (lease * 3) / 4 });
    assert.equal(late.start, true);
    assert.ok((await score()) > claimed.deadline, "renewed before the start");
    // Fresh: run, no renewal.
    const renewed = await score();
    assert.equal((await check.before(queue, { ...claimed, deadline: renewed })).start, true);
    assert.equal(await score(), renewed);
    // Under half left, but another worker holds it now (a stale token): refused, not run.
    const stale = await check.before(queue, {
      ...claimed,
      attempts: claimed.attempts + 1,
      deadline: renewed - (lease * 3) / 4,
    });
    assert.ok(!stale.start && !stale.handBack && stale.error instanceof LeaseLostError, String(stale));
    assert.deepEqual(faults, []);
  });
});

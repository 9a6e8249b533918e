/**
 * REQUEUE and RESCHEDULE on both wires: a requeue hands an active job back to pending without
 * consuming its attempt (its limit rises by one, so it never kills a job); a reschedule (wire 6
 * only) snoozes it into schedule and the attempt counts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { JobNotFoundError, LeaseLostError } from "../src/index.js";
import { claim, fail, jobKey, newId, requeue, reschedule } from "../src/protocol.js";
import { lifecycle, refused } from "./support/lifecycle.js";
import { forEachWire } from "./support/wires.js";

forEachWire("requeue and reschedule", (ctx) => {
  const { cli, dump, timed, within, epoch, refusedUnchanged, leased } = lifecycle(ctx);

  /* ------------------------------------------------------------------ RESCHEDULE */

  test("RESCHEDULE: on both wires the job snoozes to scheduled, the attempt counts", async () => {
    const { conn } = ctx();
    const job = await leased("ns", "x", { priority: 6 });
    const e = await epoch();
    const { value: due, lo, hi } = await timed(() => reschedule(conn, "ns", job.id, job.token, 20_000));
    within(due, lo + 20_000, hi + 20_000, "due");
    assert.deepEqual(await dump("ns"), {
      [jobKey("ns", job.id)]: {
        state: "scheduled",
        attempts: "1",
        payload: "x",
        priority: "6",
        ...e,
        ...job.on,
      },
      "emq:{ns}:schedule": [job.id, String(due)],
    });
    await refusedUnchanged(
      "ns",
      () => reschedule(conn, "ns", job.id, job.token, 1),
      "ERR EMQ.RESCHEDULE job is not active",
      LeaseLostError,
    );
  });

  /* ------------------------------------------------------------------ REQUEUE */

  test("REQUEUE: back to pending at the row's priority, the attempt given back (max_attempts = M + 1)", async () => {
    const { conn } = ctx();
    const e = await epoch();
    const job = await leased("nr", "y", { priority: -2 });
    await requeue(conn, "nr", job.id, job.token, 3);
    assert.deepEqual(await dump("nr"), {
      [jobKey("nr", job.id)]: {
        state: "pending",
        attempts: "1",
        payload: "y",
        priority: "-2",
        max_attempts: "4",
        ...e,
        ...job.on,
      },
      "emq:{nr}:pending": [job.id, "-2"],
    });
    // Claimed again: attempts (the lease token) rises; the row's own max_attempts now wins.
    const again = (await claim(conn, "nr", 30_000))!;
    assert.equal(again.attempts, 2);
    await requeue(conn, "nr", again.id, again.attempts, 3);
    assert.equal(await cli("HGET", jobKey("nr", job.id), "max_attempts"), "5");
    // A row's max_attempts that is not a positive integer: the given one is used.
    const third = (await claim(conn, "nr", 30_000))!;
    await cli("HSET", jobKey("nr", job.id), "max_attempts", "0");
    await requeue(conn, "nr", third.id, third.attempts, 7);
    assert.equal(await cli("HGET", jobKey("nr", job.id), "max_attempts"), "8");
  });

  test("REQUEUE never kills a job: a job requeued at its last attempt is claimed again, then fails to dead only by its own attempts", async () => {
    const { conn } = ctx();
    const job = await leased("nk", "z", { maxAttempts: 1 });
    await requeue(conn, "nk", job.id, job.token, 1);
    const again = (await claim(conn, "nk", 30_000))!;
    assert.equal(again.id, job.id);
    assert.equal(again.attempts, 2);
    const opts = { backoffMs: 0, maxAttempts: 1, keep: 10 };
    assert.equal(await fail(conn, "nk", again.id, again.attempts, "boom", opts), "dead");
  });

  test("REQUEUE refusals: lease gate (stale token, not active), not found, values — exact texts, nothing written", async () => {
    const { conn } = ctx();
    const job = await leased("nq", "y");
    await refusedUnchanged(
      "nq",
      () => requeue(conn, "nq", job.id, 9, 3),
      "ERR EMQ.REQUEUE stale lease token",
      LeaseLostError,
    );
    await requeue(conn, "nq", job.id, job.token, 3);
    await refusedUnchanged(
      "nq",
      () => requeue(conn, "nq", job.id, job.token, 3),
      "ERR EMQ.REQUEUE job is not active",
      LeaseLostError,
    );
    await refused(
      () => requeue(conn, "nq", newId(), 1, 3),
      "ERR EMQ.REQUEUE job not found",
      JobNotFoundError,
    );
  });
});

/**
 * Every name the `echomq/bullmq` table refuses is refused when used: a `BullMQRefusalError`
 * naming it, with the table's advice, and nothing written. One invocation per refused entry (a
 * test fails when the table gains a refusal without one here).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Connection, connect } from "../src/index.js";
import {
  BullMQRefusalError,
  FlowProducer,
  type Job,
  NAMES,
  Queue,
  QueueEvents,
  Worker,
} from "../src/bullmq.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";

let server: ValkeyServer;
let connection: Connection;
let queue: Queue;
let job: Job;
before(async () => {
  server = await startValkey();
  connection = await connect({ port: server.port });
  queue = new Queue("q", { connection });
  job = await queue.add("j", {});
});
after(async () => {
  await queue.close();
  await connection.close();
  await server.stop();
});

const noop = async () => {};
const idle = () => new Worker("q", noop, { connection, autorun: false });
const VALUES: Record<string, unknown> = {
  removeOnComplete: true,
  removeOnFail: 5,
  lifo: true,
  timestamp: 1,
  parent: { id: "x", queue: "y" },
};
const value = (name: string) => (name in VALUES ? VALUES[name] : 1);

/** How each refused entry is met, by `<scope>|<name>`. */
function invocation(scope: string, name: string): (() => unknown) | undefined {
  switch (scope) {
    case "Queue options":
      return () => new Queue("q", { connection, [name]: value(name) });
    case "job options":
      return () => queue.add("j", {}, { [name]: value(name) });
    case "repeat options":
      return () => queue.upsertJobScheduler("s", { every: 1000, [name]: value(name) } as never);
    case "Queue":
      return () => (queue as unknown as Record<string, () => unknown>)[name]!();
    case "Worker options":
      return () => new Worker("q", noop, { connection, [name]: value(name) });
    case "QueueEvents options":
      return () => new QueueEvents("q", { connection, autorun: false, [name]: value(name) });
    case "QueueEvents":
      return () => new QueueEvents("q", { connection, autorun: false }).on(name, noop);
    case "FlowProducer options":
      return () => new FlowProducer({ connection, [name]: value(name) });
    case "Job": {
      const method = name.split(" ")[0]!;
      return () => (job as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!("x");
    }
  }
  const own: Record<string, () => unknown> = {
    "Worker|close(true)": () => idle().close(true),
    "Worker|pause": () => idle().pause(),
    "Worker|resume": () => idle().resume(),
    "Worker|rateLimit": () => idle().rateLimit(10),
    "Worker|startStalledCheckTimer": () => idle().startStalledCheckTimer(),
    "FlowProducer|jobId in a flow": () =>
      new FlowProducer({ connection }).add({ name: "p", queueName: "q", opts: { jobId: "x" } }),
    "FlowProducer|getFlow": () => new FlowProducer({ connection }).getFlow({}),
  };
  return own[`${scope}|${name}`];
}

const refused = NAMES.filter((e) => e.status === "refused");

test("the table refuses names, and each refused name has an invocation here", () => {
  assert.ok(refused.length > 40);
  const missing = refused
    .filter((e) => invocation(e.scope, e.name) === undefined)
    .map((e) => `${e.scope}|${e.name}`);
  assert.deepEqual(missing, []);
});

for (const entry of refused) {
  test(`${entry.scope}: ${entry.name} is refused by name, with what to use`, async () => {
    const before = await server.cli("DBSIZE");
    await assert.rejects(
      async () => invocation(entry.scope, entry.name)!(),
      (err: unknown) => {
        assert.ok(err instanceof BullMQRefusalError, `${String(err)}`);
        assert.equal(err.message, `echomq/bullmq does not honour ${err.feature}: ${entry.echomq}`);
        assert.ok(err.feature.includes(entry.name.split(" ")[0]!.replace(/\(.*$/, "")), err.feature);
        return true;
      },
    );
    assert.equal(await server.cli("DBSIZE"), before);
  });
}

test("a name the table does not know is refused as unknown", async () => {
  await assert.rejects(() => queue.add("j", {}, { atempts: 3 } as never), {
    name: "BullMQRefusalError",
    message:
      "echomq/bullmq does not honour atempts (job options): it is not a BullMQ name this entry knows (docs/migrating-from-bullmq.md lists them)",
  });
  // The Worker's { age } is honoured (seconds, test/retention.test.ts); a bad one is refused by name.
  assert.throws(() => new Worker("q", noop, { connection, removeOnComplete: { age: -1 }, autorun: false }), {
    name: "InvalidArgumentError",
    message: "invalid removeOnComplete.age: must be a positive number of seconds, got -1",
  });
});

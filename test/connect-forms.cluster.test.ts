/**
 * Cluster nodes the way BullMQ users pass them, on a local 3-primary cluster (wire 4: the forms
 * are resolved before the wire plays a part, and the single-node file holds both wires to them):
 * `nodes` as URLs and `host:port`, an existing ioredis-style `Cluster` whose startup nodes are
 * carried over (its own sockets never opened), and a database other than 0 refused by name in
 * every form.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Cluster } from "iovalkey";
import { type Connection, type ConnectOptions, connect, InvalidArgumentError, Queue } from "../src/index.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";

const refusedDb = (e: unknown) =>
  e instanceof InvalidArgumentError &&
  e.argument === "db" &&
  /a cluster has only database 0, got 2/.test(e.message);

describe("connect(): cluster nodes as URLs, host:port and an existing Cluster client", () => {
  let cluster: LocalCluster;
  const opened: Connection[] = [];
  before(async () => {
    cluster = await startCluster({ primaries: 3 });
  });
  after(async () => {
    for (const conn of opened) await conn.close();
    await cluster?.stop();
  });

  /** The connection reaches every shard: a job added on each of three queues reads back. */
  async function reaches(options: ConnectOptions): Promise<void> {
    const conn = await connect(options);
    opened.push(conn);
    assert.equal(conn.cluster, true);
    for (const name of ["alpha", "bravo", "charlie"]) {
      const q = new Queue(name, conn);
      const { id } = await q.add(name);
      assert.equal((await q.getJob(id))?.state, "pending", name);
    }
  }

  test("nodes as a redis:// URL and as host:port", async () => {
    const [a, b] = cluster.seeds;
    await reaches({ nodes: [`redis://${a!.host}:${a!.port}`, `${b!.host}:${b!.port}`] });
  });

  test("an existing Cluster client: its startup nodes carried over, its sockets never opened", async () => {
    const client = new Cluster([{ host: cluster.seeds[0]!.host, port: cluster.seeds[0]!.port }], {
      lazyConnect: true,
    });
    await reaches({ connection: client });
    assert.equal(client.status, "wait");
  });

  test("a database other than 0 is refused by name, however it is given", async () => {
    const seed = cluster.seeds[0]!;
    const forms: ConnectOptions[] = [
      { nodes: cluster.seeds, db: 2 },
      { nodes: [`redis://${seed.host}:${seed.port}/2`] },
      { connection: new Cluster([seed], { lazyConnect: true, redisOptions: { db: 2 } }) },
    ];
    for (const form of forms) await assert.rejects(connect(form), refusedDb);
  });
});

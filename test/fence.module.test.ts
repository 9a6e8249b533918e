/**
 * The wire-4 fence refuses a node that runs the module — on one node as on a cluster — before it
 * writes anything (SPEC: a node serves the scripts or the job-core write verbs, never both), so a
 * default `connect()` never brands a module node with the scripts' brand; the node can still be installed
 * and served on wire 6. `echomq status` on a module node with no brand says what to do.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { connect, VersionFenceError } from "../src/index.js";
import { installModuleBrand } from "../src/admin.js";
import { modulePath } from "../tools/module-path.js";
import { assertBuilt, echomq } from "./support/cli.js";
import { type LocalCluster, startCluster } from "./support/cluster.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { V, WIRE4 } from "./support/module.js";

/** The wire-4 refusal of a module node: typed, and says to connect with wire 6 or install. */
function refusesModuleNode(err: unknown): boolean {
  assert.ok(err instanceof VersionFenceError, String(err));
  assert.equal(err.expected, WIRE4);
  assert.match(err.got, /^the echomq module \d+\.\d+\.\d+$/);
  assert.match(err.message, /connect with \{ wire: 6 \}/);
  assert.match(err.message, /`echomq install`/);
  return true;
}

describe("wire 4 on one module node", () => {
  let server: ValkeyServer;
  before(async () => {
    assertBuilt();
    server = await startValkey({ module: modulePath() });
  });
  after(() => server?.stop());
  beforeEach(() => server.cli("FLUSHALL", "SYNC"));

  test("a fresh module node: default connect() is refused, writes no brand; `echomq install` then works and wire 6 connects", async () => {
    await assert.rejects(connect({ port: server.port }), refusesModuleNode);
    assert.equal(await server.cli("GET", V), null, "the wire-4 fence wrote nothing");
    assert.equal(await server.cli("DBSIZE"), 0);

    const installed = await echomq(["install", "--url", server.url]);
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, /branded echomq:6\.0\.0/);
    const conn = await connect({ port: server.port, wire: 6 });
    assert.equal(conn.wire, 6);
    await conn.close();
  });

  test(`a module node already branded ${WIRE4} is refused too (the node's role wins over its brand)`, async () => {
    await server.cli("SET", V, WIRE4);
    await assert.rejects(connect({ port: server.port }), refusesModuleNode);
    assert.equal(String(await server.cli("GET", V)), WIRE4, "the brand is left as it was");
  });

  test("wire 6 on the unbranded module node says to brand it with `echomq install`", async () => {
    await assert.rejects(connect({ port: server.port, wire: 6 }), (err: unknown) => {
      assert.ok(err instanceof VersionFenceError, String(err));
      assert.equal(err.got, "absent");
      assert.match(err.message, /runs the echomq module but is not branded/);
      assert.match(err.message, /`echomq install`/);
      return true;
    });
    assert.equal(await server.cli("GET", V), null);
  });

  test("`echomq status` on the unbranded module node says it is not branded and how to brand it", async () => {
    const ran = await echomq(["status", "--url", server.url]);
    assert.equal(ran.code, 3, ran.stdout);
    assert.match(ran.stderr, /runs the echomq module but is not branded/);
    assert.match(ran.stderr, /`echomq install`/);
    assert.equal(await server.cli("GET", V), null, "status wrote nothing");
  });
});

describe("wire 4 on a cluster of module nodes", () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await startCluster({ primaries: 3, module: modulePath() });
  });
  after(() => cluster?.stop());

  test("refused at connect with the same text, naming a node; the intent record stays absent; installModuleBrand then lets wire 6 in", async () => {
    await assert.rejects(connect({ nodes: cluster.seeds }), (err: unknown) => {
      refusesModuleNode(err);
      assert.ok(cluster.nodes.some((n) => (err as VersionFenceError).node === `${n.host}:${n.port}`));
      return true;
    });
    for (const node of cluster.nodes) assert.equal(await node.cli("DBSIZE"), 0, "nothing written");
    await installModuleBrand({ nodes: cluster.seeds });
    const conn = await connect({ nodes: cluster.seeds, wire: 6 });
    assert.equal(conn.wire, 6);
    await conn.close();
  });
});

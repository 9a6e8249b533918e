/**
 * The stand: one transition, run twice. Two embedded nodes (the harness's scratch servers) — A
 * plain, branded by a wire-4 connector, and B with the native module, branded by EMQ.INSTALL —
 * each watched by MONITOR; the same enqueue + claim through a wire-4 connector to A and a wire-6
 * connector to B; then, side by side, the lines each node received, what each connector returned
 * and the keys each node holds, every difference either declared or reported as unexpected.
 *
 * Usage: stand [--json] | stand --cluster (tools/stand-cluster.ts: the same steps on two local
 * clusters, the lines each primary received). Exit 0: the same but for the declared differences; 1: unexpected
 * differences; 2: the stand could not run. Ctrl-C stops both servers.
 */
import type { Window } from "../harness/compare.js";
import { offsetsOf } from "../harness/executors.js";
import { text, timeMs } from "../harness/resp.js";
import { Scratch } from "../harness/scratch.js";
import { shapeOf, VERSION_KEY, verbOf } from "../harness/verbs.js";
import { claim, enqueue, newId } from "../src/protocol.js";
import { type Connection, connect } from "../src/index.js";
import { type MonitorHandle, monitor } from "../test/support/monitor.js";
import { isMain } from "./is-main.js";
import { runClusterStand } from "./stand-cluster.js";
export type { KeyEntry, StandResult, StepResult } from "./stand-compare.js";

import {
  capture,
  compareKeyspaces,
  compareMonitor,
  compareReplies,
  describeReply,
  type KeyspaceContext,
  literal,
  normalised,
  SIDES,
  type NodeInfo,
  type Side,
  type StandResult,
  type StepResult,
} from "./stand-compare.js";
import { render } from "./stand-render.js";

const QUEUE = "quotes";
const LEASE_MS = 30_000;
const PAYLOAD = '{"symbol":"EURUSD","bid":"1.08412","ask":"1.08430","venue":"LDN","seq":1}';
export const VERDICT_OK = "stand: the same on both nodes but for the declared differences";

interface StandOptions {
  json?: boolean;
  out?: (line: string) => void;
}

interface Node {
  scratch: Scratch;
  conn: Connection;
  mon: MonitorHandle;
  /** The connector's address as the server sees it (CLIENT INFO), to pick its MONITOR lines. */
  addr: string;
  /** MONITOR entries before this index belong to earlier steps. */
  from: number;
}

async function openNode(scratch: Scratch, wire: 4 | 6): Promise<Node> {
  const conn = await connect({ host: scratch.server.host, port: scratch.port, wire });
  const addr = /\baddr=(\S+)/.exec(String(await conn.send("CLIENT", ["INFO"])))?.[1] ?? "";
  return { scratch, conn, addr, from: 0, mon: await monitor(scratch.port, { host: scratch.server.host }) };
}

async function nodeInfo(node: Node, wire: 4 | 6): Promise<NodeInfo> {
  const { scratch } = node;
  return {
    label: wire === 4 ? "node A" : "node B",
    brandedBy: wire === 4 ? "the wire-4 connector (SET NX)" : "EMQ.INSTALL",
    host: scratch.server.host,
    port: scratch.port,
    wire,
    module: scratch.module !== undefined,
    brand: text(await scratch.client.one("GET", VERSION_KEY)),
    runId: scratch.runId,
  };
}

/** The MONITOR entries of `node` since the last step: up to a marker its scratch client sends. */
async function linesOfStep(node: Node, marker: string) {
  const seen = node.mon.waitFor((e) => e.args[0]?.toLowerCase() === "echo" && e.args[1] === marker);
  await node.scratch.client.one("ECHO", marker);
  const entries = node.mon.entries();
  const end = entries.indexOf(await seen);
  const lines = entries.slice(node.from, end);
  node.from = end + 1;
  return lines;
}

/** Runs one step on both nodes and compares what each received, returned and holds. */
async function runStep(
  nodes: Record<Side, Node>,
  name: StepResult["name"],
  call: string,
  send: (conn: Connection) => Promise<Parameters<typeof describeReply>[0]>,
  ctx: { leased: string | null; runIdB: string; prev?: KeyspaceContext["prev"] },
): Promise<[StepResult, NonNullable<KeyspaceContext["prev"]>]> {
  const reply = {} as StepResult["reply"];
  const windows = {} as Record<Side, Window>;
  for (const side of SIDES) {
    const clock = async () => timeMs(await nodes[side].scratch.client.one("TIME"));
    const lo = await clock();
    reply[side] = describeReply(await send(nodes[side].conn));
    windows[side] = { lo, hi: await clock() };
  }
  const monitorOf = async (side: Side) =>
    capture(await linesOfStep(nodes[side], `stand:${name}`), nodes[side].addr);
  const mon = { a: await monitorOf("a"), b: await monitorOf("b") };
  const raw = {
    a: await nodes.a.scratch.keys.dumpQueues([QUEUE]),
    b: await nodes.b.scratch.keys.dumpQueues([QUEUE]),
  };
  // The values the step sent, read back from B's line, give the times it may write (the verb table).
  const verb = verbOf(name.toUpperCase());
  const line = mon.b.transition.find((args) => args[0]?.toUpperCase() === `EMQ.${verb.verb}`) ?? [];
  const shape = shapeOf(
    verb,
    line.slice(1).map((s) => Buffer.from(s, "latin1")),
  );
  const values = shape.kind === "ok" ? shape.values : [];
  const offsets = offsetsOf(verb, values);
  const replyOffset = verb.replyTime && Number(values[verb.replyTime.offset]?.toString("latin1"));
  const keyspace = { queue: QUEUE, windows, offsets, ...ctx };
  const rows = [
    ...compareMonitor(verb, mon.a, mon.b, QUEUE),
    ...compareReplies(reply, windows, replyOffset || undefined),
    ...compareKeyspaces(raw.a, raw.b, keyspace),
  ];
  const entries = (side: Side) =>
    [...literal(raw[side])].map(([key, { type, entries }]) => ({ key, type, entries }));
  const norm = normalised(raw.a, raw.b, keyspace);
  const state = { a: { raw: raw.a, norm: norm.a }, b: { raw: raw.b, norm: norm.b } };
  const step = { name, call, monitor: mon, reply, keyspace: { a: entries("a"), b: entries("b") }, rows };
  return [step, state];
}

export async function runStand(opts: StandOptions = {}): Promise<StandResult> {
  const sink = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started: (() => Promise<unknown>)[] = [];
  try {
    const a = await Scratch.start({ module: null });
    started.push(() => a.stop());
    const b = await Scratch.start();
    started.push(() => b.stop());
    const nodes = { a: await openNode(a, 4), b: await openNode(b, 6) };
    for (const node of Object.values(nodes))
      started.push(
        () => node.conn.close(),
        () => node.mon.stop(),
      );
    const info = { a: await nodeInfo(nodes.a, 4), b: await nodeInfo(nodes.b, 6) };
    const id = newId();
    const enqueueCall = `enqueue(conn, "${QUEUE}", <payload>, { id: "${id}" })`;
    const [enqueued, after] = await runStep(
      nodes,
      "enqueue",
      enqueueCall,
      (conn) => enqueue(conn, QUEUE, PAYLOAD, { id }),
      { leased: null, runIdB: b.runId },
    );
    const [claimed] = await runStep(
      nodes,
      "claim",
      `claim(conn, "${QUEUE}", ${LEASE_MS})`,
      (conn) => claim(conn, QUEUE, LEASE_MS),
      { leased: id, runIdB: b.runId, prev: after },
    );
    const steps = [enqueued, claimed];
    const unexpected = steps.flatMap((s) =>
      s.rows.filter((r) => r.mark === "unexpected").map((r) => `step ${s.name}: ${r.what}: ${r.note}`),
    );
    const ok = unexpected.length === 0;
    const verdict = ok ? VERDICT_OK : `stand: ${unexpected.length} unexpected difference(s)`;
    const result = {
      ok,
      verdict,
      queue: QUEUE,
      id,
      leaseMs: LEASE_MS,
      payload: PAYLOAD,
      nodes: info,
      steps,
      unexpected,
    };
    if (opts.json) sink(JSON.stringify(result, null, 2));
    else render(result, (line) => sink(line.trimEnd()));
    return result;
  } finally {
    for (const stop of started.reverse()) await stop().catch(() => {});
  }
}

if (isMain(import.meta.url)) {
  // test/support/valkey.ts kills both servers on SIGINT (and any still starting); then exit.
  process.once("SIGINT", () => {
    process.stdout.write("\ninterrupted: stopping both servers\n");
    process.exit(130);
  });
  if (process.argv.includes("--cluster")) {
    runClusterStand().then(
      (ok) => process.exit(ok ? 0 : 1),
      (err: unknown) => {
        process.stderr.write(`stand failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(2);
      },
    );
  } else
    runStand({ json: process.argv.includes("--json") }).then(
      (result) => process.exit(result.ok ? 0 : 1),
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        const hint = /lacks verbs/.test(message)
          ? "\n  the module build is older than the host's scripts: rebuild it"
          : "";
        process.stderr.write(`stand failed: ${message}${hint}\n`);
        process.exit(2);
      },
    );
}

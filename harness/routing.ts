/**
 * On a cluster the server routes a call before either executor runs it: `EVAL` by its numkeys
 * (the keys it names), `EMQ.<VERB>` by its key specs (one per declared key, at fixed positions).
 * A call whose keys, so read, are not all in one slot that the node serves is refused there —
 * `CROSSSLOT …`, or `MOVED <slot> <owner>` — and writes nothing. The harness reads the keys the
 * server's own way (`COMMAND GETKEYS`, `EVAL` asked as `EVALSHA`) and predicts the answer from
 * the cluster's slot map.
 *
 * A step refused by routing on either side is judged here: each refused side must answer the
 * predicted text; a side routing lets through must answer an error of its own (the two readings
 * differ only when numkeys does not match the form: shape refuses it); neither side writes or
 * publishes. When both sides get the same routing refusal the step is equal; otherwise the
 * readings differed, declared difference C1.
 */
import { createHash } from "node:crypto";
import { slot } from "../src/keyspace.js";
import { changes, showReply } from "./compare.js";
import { type Call, type Executors, type Side, tail } from "./executors.js";
import type { Sides } from "./guards.js";
import type { Command, Reply } from "./resp.js";
import type { Verb } from "./verbs.js";

export const CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot";

/** Per side, the server's routing refusal (null: the call reaches its executor). */
export interface Routed {
  script: string | null;
  native: string | null;
}

/** What the server answers `command` on `ex`'s node before running it; null when it runs there. */
async function routing(ex: Executors, command: Command): Promise<string | null> {
  const shard = ex.shard;
  if (shard === null) return null;
  const [name, body, ...rest] = command;
  const asked: Command =
    name === "EVAL"
      ? [
          "EVALSHA",
          createHash("sha1")
            .update(Buffer.isBuffer(body) ? body : String(body))
            .digest("hex"),
          ...rest,
        ]
      : command;
  const reply = await ex.scratch.client.one("COMMAND", "GETKEYS", ...asked);
  // An error here (no key found, arguments the command cannot take): nothing to route by.
  if (reply.t !== "array") return null;
  const slots = new Set(reply.v.map((key) => slot(key.t === "bulk" ? key.v : Buffer.alloc(0))));
  if (slots.size > 1) return CROSSSLOT;
  const [only] = slots;
  if (only === undefined) return null;
  const owner = shard.owner(only);
  return owner === shard.self ? null : `MOVED ${only} ${owner}`;
}

/** Both sides' routing for `call`; null when neither side is refused by it (or on one node). */
export async function predictRouting(
  ex: Executors,
  verb: Verb,
  call: Call,
  sides: Sides,
): Promise<Routed | null> {
  if (ex.shard === null) return null;
  const script =
    verb.script === null ? null : await routing(ex, ex.evalCommand(verb, tail(call, sides.script)));
  const native = await routing(ex, ex.nativeCommand(verb, tail(call, sides.native)));
  return script === null && native === null ? null : { script, native };
}

/** What a routed step left: the problems, whether it is C1, and the native side's reply. */
interface RoutedStep {
  problems: string[];
  declared: boolean;
  native: { reply: Reply; window: { lo: number; hi: number } };
}

/** Runs a step the server refuses by routing on at least one side (each side alone) and judges it. */
export async function routedStep(
  ex: Executors,
  verb: Verb,
  call: Call,
  sides: Sides,
  routed: Routed,
): Promise<RoutedStep> {
  const keys = ex.scratch.keys;
  const names = (side: Side) => sides.queues.map((q) => side.name(q));
  const before = [await keys.dumpQueues(names(sides.script)), await keys.dumpQueues(names(sides.native))];
  const script = verb.script === null ? null : await ex.alone(ex.evalCommand(verb, tail(call, sides.script)));
  const run = await ex.alone(ex.nativeCommand(verb, tail(call, sides.native)));
  const native = { reply: await ex.injectFault(verb, run.reply, sides.native), window: run.window };
  const after = [await keys.dumpQueues(names(sides.script)), await keys.dumpQueues(names(sides.native))];
  const wakes = await ex.scratch.sub.drain();
  const problems: string[] = [];
  const judge = (tag: "script" | "native", reply: Reply | undefined, want: string | null) => {
    if (reply === undefined) return;
    if (want !== null && !(reply.t === "error" && reply.v === want))
      problems.push(
        `routing: the ${tag} side answered ${showReply(reply)}, the server's routing says -${want}`,
      );
    if (want === null && reply.t !== "error")
      problems.push(
        `routing: the ${tag} side reached its executor and answered ${showReply(reply)}, not a refusal`,
      );
  };
  judge("script", script?.reply, routed.script);
  judge("native", native.reply, routed.native);
  for (const c of changes(before[0]!, after[0]!)) problems.push(`routing: the script side wrote: ${c}`);
  for (const c of changes(before[1]!, after[1]!)) problems.push(`routing: the native side wrote: ${c}`);
  if (wakes.length > 0) problems.push(`routing: ${wakes.length} wake message(s) published`);
  const declared = verb.script === null || routed.script !== routed.native;
  return { problems, declared, native };
}

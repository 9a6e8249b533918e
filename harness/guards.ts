/**
 * The write guard on a fresh replica of the scratch server. Read-only: the server refuses both
 * sides up front with its `READONLY` text and neither writes (compared, nothing declared).
 * Writable (`replica-read-only no`): the script runs and may write there, the native write guard
 * refuses (declared difference D5).
 */
import { canon, changes, showReply } from "./compare.js";
import { GUARD_TEXT, judge } from "./declared.js";
import { type Call, type Executors, type Side, tail } from "./executors.js";
import type { Reply } from "./resp.js";
import type { Verb } from "./verbs.js";

/** The two sides of a case and its logical queues. */
export interface Sides {
  script: Side;
  native: Side;
  queues: readonly string[];
}

/** Runs `call` on both sides on a fresh replica; the problems found (empty when it holds). */
export function onReplica(
  ex: Executors,
  verb: Verb,
  call: Call,
  sides: Sides,
  writable: boolean,
): Promise<string[]> {
  return ex.onReplica(writable, async (keys) => {
    const queues = (side: Side) => sides.queues.map((q) => side.name(q));
    const beforeS = await keys.dumpQueues(queues(sides.script));
    const beforeN = await keys.dumpQueues(queues(sides.native));
    const script = await keys.client.one(...ex.evalCommand(verb, tail(call, sides.script)));
    const native = ex.asCompared(
      verb,
      await keys.client.one(...ex.nativeCommand(verb, tail(call, sides.native))),
    );
    const scriptChanges = changes(beforeS, await keys.dumpQueues(queues(sides.script)));
    const nativeChanges = changes(beforeN, await keys.dumpQueues(queues(sides.native)));
    if (writable) {
      return judge("D5", {
        verb,
        brand: ex.brandValue,
        guard: "writable-replica",
        script,
        scriptSent: true,
        scriptChanges,
        native,
        nativeChanges,
        nativeWakes: 0,
        hostAnswered: false,
      });
    }
    const readonly: Reply = { t: "error", v: GUARD_TEXT.replica };
    return [
      ...(canon(script) === canon(readonly) ? [] : [`read-only replica: script ${showReply(script)}`]),
      ...(canon(native) === canon(readonly) ? [] : [`read-only replica: native ${showReply(native)}`]),
      ...scriptChanges.map((c) => `read-only replica: the script side wrote: ${c}`),
      ...nativeChanges.map((c) => `read-only replica: the native side wrote: ${c}`),
    ];
  });
}

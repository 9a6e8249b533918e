/**
 * The declared differences (docs/protocol.md, "Declared differences") and how each is judged: a
 * step that meets one is held to the declaration's own text, never to what the script did.
 *
 * D1 (lease_epoch) and D6 (lease time) are deltas inside ordinary comparisons (harness/compare.ts
 * checks and masks `lease_epoch`; exact cases share one clock). D8 (a job-core verb
 * without a script twin: none left) runs the executable check of harness/spec.ts. The rest, P1 included, are judged here.
 */
import { canon, showReply } from "./compare.js";
import type { RawDump, RawValue } from "./dump.js";
import { type Call, type Side, tail } from "./executors.js";
import type { Reply } from "./resp.js";
import { fence } from "./spec.js";
import {
  accepts,
  layoutError,
  layoutQueue,
  orphanAhead,
  queueKey,
  shapeOf,
  type Verb,
  WRONGTYPE,
  wrongKeys,
} from "./verbs.js";

export type DeclaredId = "D2" | "D3" | "D4" | "D5" | "D7" | "D8" | "P1" | "C1";

export const DECLARATIONS: Record<DeclaredId | "D1" | "D6", string> = {
  D1: "lease_epoch: the native claim adds lease_epoch = run_id on every row it leases (checked, then masked)",
  D2: "paused queue: EMQ.CLAIM answers an empty array and writes nothing; the host's pause read answers null and sends nothing; a raw EVAL of claim.lua claims",
  D3: "layout: the native verb refuses keys that are not one queue's wire-4 layout, before the fence, writing nothing; the script runs on any keys",
  D4: "fence: every native job-core verb refuses a node not branded for wire 6 with EMQWIRE, writing nothing; scripts read no brand",
  D5: "write guard on a writable replica (replica-read-only no): every native verb answers READONLY and writes nothing; the server lets the script run and write there",
  D6: "lease time: TIME in the script, the cached clock in the module; equal in one MULTI/EXEC",
  D7: "CLAIM with a meta key that is not a hash: the native pause read answers WRONGTYPE; a raw EVAL of claim.lua claims (unless orphans ahead of the head are to be counted in meta: then both answer WRONGTYPE, compared)",
  D8: "a job-core verb without a script twin (none since reschedule.lua), held to an executable check written from docs/protocol.md",
  C1: "cluster routing: the server routes EVAL by its numkeys and EMQ.* by its key specs; a call whose keys so read leave the node's slots is refused before it runs (CROSSSLOT, MOVED), writing nothing; with a numkeys that does not match the form the readings differ, and one side may be refused by routing while the other is refused by shape",
  P1: "a numkeys EVAL itself refuses (absent, not an integer, negative, beyond the arguments): EVAL answers its own error, the native verb its shape error 'wrong number of keys' (an admission over maxmemory: the server's OOM text); neither writes",
};

/** What a judged step produced: both replies and what each side changed. */
interface Evidence {
  verb: Verb;
  brand: RawValue | undefined;
  guard?: "writable-replica";
  /** The script side's reply; null when nothing was sent. */
  script: Reply | null;
  scriptSent: boolean;
  scriptChanges: string[];
  native: Reply;
  nativeChanges: string[];
  nativeWakes: number;
  /** The host answered the claim itself (its pause read), sending no script. */
  hostAnswered: boolean;
  /** An admission over `maxmemory`: the server refuses the native verb before its handler. */
  full?: boolean;
}

export const GUARD_TEXT = {
  oom: "OOM command not allowed when used memory > 'maxmemory'.",
  replica: "READONLY You can't write against a read only replica.",
};

const error = (text: string): Reply => ({ t: "error", v: text });
const EMPTY: Reply = { t: "array", v: [] };

/** The problems with a step judged against declaration `d`; empty when it holds. */
export function judge(d: DeclaredId, e: Evidence): string[] {
  const problems: string[] = [];
  const expectNative = (want: Reply) => {
    if (canon(e.native) !== canon(want)) {
      problems.push(`${d}: native replied ${showReply(e.native)}, the declaration says ${showReply(want)}`);
    }
  };
  const scriptIs = (ok: boolean, what: string) => {
    if (!ok)
      problems.push(`${d}: the script ${what}, got ${e.script ? showReply(e.script) : "nothing sent"}`);
  };
  const scriptError = () => e.script?.t === "error";
  const scriptArray = () => e.script?.t === "array";
  if (e.nativeChanges.length > 0) problems.push(`${d}: the native side wrote: ${e.nativeChanges.join("; ")}`);
  if (e.nativeWakes > 0) problems.push(`${d}: the native side published ${e.nativeWakes} wake message(s)`);

  switch (d) {
    case "P1":
      expectNative(error(e.full ? GUARD_TEXT.oom : wrongKeys(e.verb)));
      scriptIs(scriptError(), "must be refused by EVAL itself");
      if (e.scriptChanges.length > 0)
        problems.push(`P1: the script side wrote: ${e.scriptChanges.join("; ")}`);
      break;
    case "D2":
      expectNative(EMPTY);
      if (e.hostAnswered) {
        scriptIs(!e.scriptSent, "must not be sent (the host reads the pause flag and answers null)");
        if (e.scriptChanges.length > 0)
          problems.push(`D2: the script side changed: ${e.scriptChanges.join("; ")}`);
      } else {
        scriptIs(scriptArray(), "(a raw EVAL) claims a paused queue");
      }
      break;
    case "D3":
      expectNative(error(layoutError(e.verb.verb)));
      break;
    case "D4": {
      const refusal = fence(e.brand);
      if (refusal === null) problems.push("D4: judged a fence case on a node branded for wire 6");
      else expectNative(error(refusal));
      if (e.scriptSent)
        scriptIs(!(e.script?.t === "error" && e.script.v.startsWith("EMQWIRE")), "reads no brand");
      break;
    }
    case "D5": {
      expectNative(error(GUARD_TEXT.replica));
      const refused = e.script?.t === "error" && e.script.v.startsWith("READONLY");
      scriptIs(e.scriptSent && !refused, "runs on a writable replica (the server lets it write there)");
      break;
    }
    case "D7":
      expectNative(error(WRONGTYPE));
      scriptIs(scriptArray(), "(a raw EVAL) never reads meta: it claims");
      break;
    case "D8":
      problems.push("D8 is judged by the executable checks, not here");
      break;
    case "C1":
      problems.push("C1 is judged by the routing check (harness/routing.ts), not here");
      break;
  }
  return problems;
}

/** How a step is run and judged: compared, held to the executable check (D8), or judged (Dn, P1). */
type Classified =
  | { kind: "compare"; hostPause: boolean }
  | { kind: "spec" }
  | { kind: "judged"; declared: DeclaredId; runScript: boolean };

/** What the classification of a step reads besides the call. */
interface StepContext {
  /** The host's own pause read runs before a claim (false: a raw EVAL). */
  host: boolean;
  /** The step runs over `maxmemory`. */
  full: boolean;
  /** Whether the native fence passes. */
  brand: "ok" | "other";
  /** Whether the script side runs for a layout refusal (D3). */
  scriptOnLayout: boolean;
  script: Side;
  scriptState: RawDump;
}

/** A step classified from the protocol before it runs, on the script side's state. */
export function classify(verb: Verb, call: Call, o: StepContext): Classified {
  if (verb.script === null) return { kind: "spec" };
  const shape = shapeOf(verb, tail(call, o.script));
  if (shape.kind === "eval-refuses") return { kind: "judged", declared: "P1", runScript: true };
  // Over maxmemory the server refuses an admission before its handler or script runs: layout,
  // fence and shape are never reached, on either side.
  if (o.full && verb.admission) return { kind: "compare", hostPause: false };
  if (shape.kind !== "ok") return { kind: "compare", hostPause: false };
  const queue = layoutQueue(verb, shape.keys, shape.values);
  if (queue === null) return { kind: "judged", declared: "D3", runScript: o.scriptOnLayout };
  if (o.brand !== "ok") return { kind: "judged", declared: "D4", runScript: true };
  if (verb.verb !== "CLAIM" || !accepts("ms", shape.values[0]!.toString("latin1"))) {
    return { kind: "compare", hostPause: false };
  }
  if (o.host) return { kind: "compare", hostPause: true };
  // A raw EVAL of claim.lua: the pause flag and meta's type are not the script's business,
  // unless an orphan ahead of the head is to be counted in meta (then both refuse WRONGTYPE).
  const meta = o.scriptState.get(queueKey(queue, "meta").toString("latin1"));
  if (meta !== undefined && meta.type !== "hash" && !orphanAhead(o.scriptState, queue))
    return { kind: "judged", declared: "D7", runScript: true };
  const paused = meta?.type === "hash" && meta.fields.some(([f, v]) => `${f}` === "paused" && `${v}` === "1");
  return paused ? { kind: "judged", declared: "D2", runScript: true } : { kind: "compare", hostPause: false };
}

/**
 * The script registry. Each transition's Lua source is read verbatim from this folder; its SHA-1
 * is computed here; its wire-6 declaration says what a module node runs instead.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** What a script is on wire 6: a native verb (`{ verb: "ENQUEUE" }`), a `read`, or nothing. */
export type Wire6Declaration = { verb: string } | "read" | null;

export class Script {
  readonly sha1: string;
  constructor(
    readonly name: string,
    readonly source: string,
    readonly wire6: Wire6Declaration,
  ) {
    this.sha1 = createHash("sha1").update(source).digest("hex");
  }

  /** `EMQ.<VERB>` when the script declares a native verb. */
  get command(): string | null {
    return this.wire6 && this.wire6 !== "read" ? `EMQ.${this.wire6.verb}` : null;
  }
}

const folder = new URL("./", import.meta.url);

/** Reads `<name>.lua` from the scripts folder, verbatim. */
export function loadScript(name: string, wire6: Wire6Declaration): Script {
  return new Script(name, readFileSync(new URL(`${name}.lua`, folder), "utf8"), wire6);
}

export const scripts = {
  enqueue: loadScript("enqueue", { verb: "ENQUEUE" }),
  add: loadScript("add", { verb: "ADD" }),
  claim: loadScript("claim", { verb: "CLAIM" }),
  extend: loadScript("extend", { verb: "EXTEND" }),
  complete: loadScript("complete", { verb: "COMPLETE" }),
  fail: loadScript("fail", { verb: "FAIL" }),
  retry: loadScript("retry", { verb: "RETRY" }),
  promote: loadScript("promote", { verb: "PROMOTE" }),
  reap: loadScript("reap", { verb: "REAP" }),
  remove: loadScript("remove", { verb: "REMOVE" }),
  pause: loadScript("pause", { verb: "PAUSE" }),
  resume: loadScript("resume", { verb: "RESUME" }),
  requeue: loadScript("requeue", { verb: "REQUEUE" }),
} as const;

/** Verbs only the module runs (no script): the host sends `EMQ.<VERB>` itself, on wire 6 only. */
export const NATIVE_ONLY_VERBS = ["RESCHEDULE"] as const;

/** The fourteen job-core verbs, in the order `EMQ.VERSION` lists them. */
export const JOB_CORE_VERBS = [
  "ENQUEUE",
  "ADD",
  "CLAIM",
  "EXTEND",
  "COMPLETE",
  "FAIL",
  "RETRY",
  "PROMOTE",
  "REAP",
  "REMOVE",
  "PAUSE",
  "RESUME",
  "RESCHEDULE",
  "REQUEUE",
] as const;

/**
 * The native verbs a wire-6 connector requires: every verb the host's scripts declare, then the
 * native-only verbs.
 */
export function declaredVerbs(): string[] {
  const scripted = Object.values(scripts).flatMap((s) =>
    s.wire6 && s.wire6 !== "read" ? [s.wire6.verb] : [],
  );
  return [...scripted, ...NATIVE_ONLY_VERBS];
}

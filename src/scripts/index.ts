/**
 * The script registry. Each transition's Lua source is read verbatim from this folder; its SHA-1
 * is computed here; its wire-6 declaration says what a module node runs instead. Which scripts
 * exist, and which verb each pairs with, comes from the protocol data (`protocol/verbs/`).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { JOB_CORE } from "../verbs/index.js";
import { SRC } from "../here.js";

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

const folder = new URL("scripts/", SRC);

/** Reads `<name>.lua` from the scripts folder, verbatim. */
export function loadScript(name: string, wire6: Wire6Declaration): Script {
  return new Script(name, readFileSync(new URL(`${name}.lua`, folder), "utf8"), wire6);
}

/** Every job-core verb's script twin, by verb token, in protocol order. */
export const SCRIPTS: ReadonlyMap<string, Script> = new Map(
  JOB_CORE.flatMap((spec) =>
    spec.script ? [[spec.verb, loadScript(spec.script, { verb: spec.verb })]] : [],
  ),
);

/** The script twin of a job-core verb (`CLAIM` → claim.lua); throws for a native-only verb. */
export function scriptFor(verb: string): Script {
  const script = SCRIPTS.get(verb);
  if (!script) throw new Error(`the protocol gives ${verb} no script twin`);
  return script;
}

/** The job-core verbs without a script twin: only the module runs them. */
export const NATIVE_ONLY_VERBS: readonly string[] = JOB_CORE.filter((s) => !s.script).map((s) => s.verb);

/** The job-core verb tokens, in the order `EMQ.VERSION` lists them. */
export const JOB_CORE_VERBS: readonly string[] = JOB_CORE.map((s) => s.verb);

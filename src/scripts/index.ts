/**
 * The script registry. Each transition's body is assembled from its Lua source in this folder and
 * the pieces it includes (`lib/`, and the pieces made from the protocol data: see assemble.ts);
 * its SHA-1 is computed here; its wire-6 declaration says what a module node runs instead. Which
 * scripts exist, and which verb each pairs with, comes from the protocol data (`protocol/verbs/`).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { SRC } from "../here.js";
import { JOB_CORE, PROTOCOL, VERB_SPECS } from "../verbs/index.js";
import { assemble, type PieceReader, type ScriptData } from "./assemble.js";

export { AssemblyError, assemble, type PieceReader, piecesOf, type ScriptData } from "./assemble.js";

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

/** Reads a file of this folder (`claim.lua`, `lib/release.lua`). */
const readHere: PieceReader = (path) => {
  const url = new URL(path, folder);
  return existsSync(url) ? readFileSync(url, "utf8") : undefined;
};

/** The protocol data of the verb whose script twin is `<name>.lua`, if any. */
export function dataOfScript(name: string): ScriptData | undefined {
  const spec = [...VERB_SPECS.values()].find((s) => s.script === name);
  return spec && { spec, grammars: PROTOCOL.grammars };
}

/** The body of `<name>.lua`: its source with the pieces it includes, assembled (assemble.ts). */
export function loadScript(name: string, wire6: Wire6Declaration, read: PieceReader = readHere): Script {
  return new Script(name, assemble(name, read, dataOfScript(name)), wire6);
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

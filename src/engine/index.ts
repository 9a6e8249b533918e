/**
 * Engine selection: the one place the wire number decides anything. Wire 4 → the scripts
 * engine; wire 6 → the native engine.
 */
import { InvalidArgumentError } from "../errors.js";
import type { EngineKind, Wire } from "./engine.js";
import { nativeEngine } from "./native.js";
import { scriptsEngine } from "./scripts.js";

export type { Arg, Engine, EngineKind, Line, ScriptCall, Sender, VerbCall, Wire } from "./engine.js";

const ENGINES: Record<Wire, (requiredVerbs?: readonly string[]) => EngineKind> = {
  4: () => scriptsEngine,
  6: (requiredVerbs) => nativeEngine(requiredVerbs),
};

/**
 * The engine for `wire` (4 or 6; anything else is an `InvalidArgumentError`); `requiredVerbs`
 * are the module verbs a wire-6 node must offer (default: every job-core verb).
 */
export function engineFor(wire: unknown, requiredVerbs?: readonly string[]): EngineKind {
  const make = Object.hasOwn(ENGINES, String(wire)) ? ENGINES[wire as Wire] : undefined;
  if (!make) throw new InvalidArgumentError("wire", `must be 4 or 6, got ${String(wire)}`);
  return make(requiredVerbs);
}

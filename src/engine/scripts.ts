/**
 * The scripts engine (wire 4): every transition is its Lua script, sent as
 * `EVALSHA <sha> <numkeys> <keys…> <values…>`; the host reads a queue's pause flag before a
 * worker's claim (the script does not). Runs on any stock Valkey. Sockets pass the wire-4 fence.
 */
import { NativeOnlyVerbError } from "../errors.js";
import { fenceWire4, fenceWire4Node, noModuleFence } from "./fence.js";
import { SCRIPTS, type Script } from "../scripts/index.js";
import type { Arg, Engine, EngineKind, ScriptCall, Sender, VerbCall } from "./engine.js";
import { evalshaLine, LineSender, type Planned } from "./lines.js";

class ScriptsEngine implements Engine {
  readonly wire = 4 as const;
  readonly claimReadsPause = false;
  private readonly lines: LineSender;

  constructor(sender: Sender) {
    this.lines = new LineSender(sender);
  }

  async serverTimers(_routeKey: string): Promise<boolean> {
    return false;
  }

  async blockingClaim(_routeKey: string): Promise<boolean> {
    return false;
  }

  runs(verb: string): boolean {
    return SCRIPTS.has(verb);
  }

  async run(verb: string, keys: readonly string[], values: readonly Arg[]): Promise<unknown> {
    return this.lines.one(this.plan({ verb, keys, values }));
  }

  async runBatch(calls: readonly VerbCall[]): Promise<unknown[]> {
    return this.lines.all(calls.map((call) => this.plan(call)));
  }

  async eval(script: Script, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.lines.one({ line: evalshaLine(script, keys, args), script });
  }

  async evalBatch(calls: readonly ScriptCall[]): Promise<unknown[]> {
    return this.lines.all(
      calls.map(({ script, keys, args }) => ({ line: evalshaLine(script, keys, args), script })),
    );
  }

  private plan({ verb, keys, values }: VerbCall): Planned {
    const script = SCRIPTS.get(verb);
    if (!script) {
      throw new NativeOnlyVerbError(verb, "Connect with wire 6 (the native module) to run it.");
    }
    return { line: evalshaLine(script, keys, values), script };
  }
}

export const scriptsEngine: EngineKind = {
  wire: 4,
  fence: fenceWire4Node,
  nodeFence: noModuleFence,
  intent: fenceWire4,
  create: (sender) => new ScriptsEngine(sender),
};

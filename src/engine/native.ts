/**
 * The native engine (wire 6): every transition is the module's `EMQ.<VERB> <numkeys> <keys…>
 * <values…>` — the script's tail with the head swapped — and the claim reads the pause flag
 * itself (D2). A script that declares no verb and is no `read` is refused locally: no Lua write
 * ever reaches a module node. Sockets pass the wire-6 fence (the module must offer every
 * job-core verb).
 */
import { brandWire6, fenceWire6, moduleFence } from "./fence.js";
import { type ModuleVersion, versionAt } from "./version.js";
import { WireRefusalError } from "../errors.js";
import type { Script } from "../scripts/index.js";
import { JOB_CORE_VERBS } from "../scripts/index.js";
import type { Arg, Engine, EngineKind, Line, ScriptCall, Sender, VerbCall } from "./engine.js";
import { evalshaLine, LineSender, type Planned } from "./lines.js";

/** `EMQ.<VERB> <numkeys> <keys…> <values…>` */
function verbLine(verb: string, keys: readonly string[], values: readonly Arg[]): Line {
  return [`EMQ.${verb}`, [keys.length, ...keys, ...values]];
}

/** The `EMQ.VERSION` feature token of the module's own timers. */
const SERVER_TIMERS = "timers";
/** The verb token a module lists under `extensions` when it offers the blocking claim. */
export const BLOCKING_CLAIM = "BCLAIM";

class NativeEngine implements Engine {
  readonly wire = 6 as const;
  readonly claimReadsPause = true;
  private readonly lines: LineSender;

  constructor(private readonly sender: Sender) {
    this.lines = new LineSender(sender);
  }

  async serverTimers(routeKey: string): Promise<boolean> {
    return (await this.version(routeKey))?.features.includes(SERVER_TIMERS) ?? false;
  }

  async blockingClaim(routeKey: string): Promise<boolean> {
    return (await this.version(routeKey))?.extensions.includes(BLOCKING_CLAIM) ?? false;
  }

  /** `EMQ.VERSION` of the node that holds `routeKey` (null from a module before 0.4.0). */
  private async version(routeKey: string): Promise<ModuleVersion | null> {
    return versionAt((c, a, k) => this.sender.send(c, a, k), routeKey);
  }

  runs(_verb: string): boolean {
    return true;
  }

  async run(verb: string, keys: readonly string[], values: readonly Arg[]): Promise<unknown> {
    return this.lines.one({ line: verbLine(verb, keys, values), script: null });
  }

  async runBatch(calls: readonly VerbCall[]): Promise<unknown[]> {
    return this.lines.all(
      calls.map(({ verb, keys, values }) => ({ line: verbLine(verb, keys, values), script: null })),
    );
  }

  async eval(script: Script, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.lines.one(this.plan({ script, keys, args }));
  }

  async evalBatch(calls: readonly ScriptCall[]): Promise<unknown[]> {
    return this.lines.all(calls.map((call) => this.plan(call)));
  }

  /** A script that declares a verb runs as that verb; a `read` script as `EVALSHA`. */
  private plan({ script, keys, args }: ScriptCall): Planned {
    if (script.wire6 !== null && script.wire6 !== "read") {
      return { line: verbLine(script.wire6.verb, keys, args), script: null };
    }
    if (script.wire6 !== "read") throw new WireRefusalError(script.name);
    return { line: evalshaLine(script, keys, args), script };
  }
}

/** The native engine, requiring `requiredVerbs` of the module (default: every job-core verb). */
export function nativeEngine(requiredVerbs: readonly string[] = JOB_CORE_VERBS): EngineKind {
  return {
    wire: 6,
    fence: (send) => fenceWire6(send, requiredVerbs),
    nodeFence: (send) => moduleFence(send, requiredVerbs),
    intent: brandWire6,
    create: (sender) => new NativeEngine(sender),
  };
}

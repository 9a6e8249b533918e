/**
 * The engine: what an executor must do for the host. Two engines run one contract — the scripts
 * engine (wire 4: each transition is its Lua script, sent as `EVALSHA`) and the native engine
 * (wire 6: each transition is the module's `EMQ.<VERB>` command) — and the rest of the host
 * (host steps, `Queue`, `Worker`) calls the engine, never the wire number.
 */
import type { Send } from "./fence.js";
import type { Script } from "../scripts/index.js";

export type Wire = 4 | 6;
export type Arg = string | Buffer | number;
/** One command as sent: its name and its arguments. */
export type Line = [command: string, args: Arg[]];
/** What an engine needs from its connection. */
export interface Sender {
  /** Sends one command (to the node that holds `routeKey`, when given); a refusal is thrown as a typed error. */
  send(command: string, args: readonly Arg[], routeKey?: string): Promise<unknown>;
  /** Sends commands in one tick (they leave together); each result is the reply or its typed error. */
  sendAll(lines: readonly Line[]): Promise<unknown[]>;
  /**
   * `SCRIPT LOAD <source>` on the node that holds `routeKey` (the first key of the line that met
   * `NOSCRIPT`, so the node that answered it), once for every line that needs it at the same
   * time. On a single node, the node itself.
   */
  loadScript(script: Script, routeKey: string): Promise<unknown>;
}

/** One transition: a protocol verb (`CLAIM`), its declared keys and its values. */
export interface VerbCall {
  verb: string;
  keys: readonly string[];
  values: readonly Arg[];
}

/** One call of a script: the script, its keys and its arguments. */
export interface ScriptCall {
  script: Script;
  keys: readonly string[];
  args: readonly Arg[];
}

export interface Engine {
  readonly wire: Wire;
  /**
   * True when the engine's claim reads the queue's pause flag inside the transition (the native
   * `EMQ.CLAIM`, declared difference D2); otherwise the host reads the flag first.
   */
  readonly claimReadsPause: boolean;
  /**
   * Whether the node that holds `routeKey` promotes and reaps by itself (the module's `timers`
   * feature in `EMQ.VERSION`, module 0.4.0 on); never on wire 4 (the host runs the loops).
   */
  serverTimers(routeKey: string): Promise<boolean>;
  /**
   * Whether the node that holds `routeKey` offers the blocking claim (`BCLAIM` among
   * `EMQ.VERSION`'s `extensions`); never on wire 4.
   */
  blockingClaim(routeKey: string): Promise<boolean>;
  /** Whether this engine can run `verb` (the scripts engine runs only verbs with a script twin). */
  runs(verb: string): boolean;
  /**
   * Runs one transition. A refusal is thrown typed (`LeaseLostError`, `JobNotFoundError`,
   * `OutOfMemoryError`, `ServerError`); a verb the engine cannot run, `NativeOnlyVerbError`.
   */
  run(verb: string, keys: readonly string[], values: readonly Arg[]): Promise<unknown>;
  /** Runs many transitions in one round trip; each result is the reply or its typed error. */
  runBatch(calls: readonly VerbCall[]): Promise<unknown[]>;
  /** Runs a script as this engine would (a script that declares a verb runs as that verb). */
  eval(script: Script, keys: readonly string[], args: readonly Arg[]): Promise<unknown>;
  /** Runs many script calls in one round trip; each result is the reply or its error. */
  evalBatch(calls: readonly ScriptCall[]): Promise<unknown[]>;
}

/** An engine as `connect()` picks it: its wire, the fence its sockets pass, and the engine itself. */
export interface EngineKind {
  readonly wire: Wire;
  /** Runs on every new socket after the boot commands and before it carries anything else. */
  fence(send: Send): Promise<void>;
  /**
   * On a cluster, the node half of the fence (docs/cluster.md): runs on every node socket, says
   * whether the node's role (the module loaded or not) is this engine's. Keyless.
   */
  nodeFence(send: Send): Promise<void>;
  /**
   * On a cluster, the cluster half: the intent record (the brand key), read (and on wire 4
   * claimed) once through the cluster client, so on whichever node owns its slot.
   */
  intent(send: Send): Promise<void>;
  create(sender: Sender): Engine;
}

/**
 * What a case is made of: its actions (a call compared or judged, plain writes, a wait, a brand,
 * a call on a node short of something, an explicit check, an install), and the last step's
 * native view an explicit check reads.
 */
import type { RawDump } from "./dump.js";
import type { Call, KeyRef, Mode, Side } from "./executors.js";
import type { Window } from "./compare.js";
import type { DeclaredId } from "./declared.js";
import type { Reply } from "./resp.js";

export type SeedArg = string | Buffer | number | KeyRef;

export type Action =
  | { kind: "call"; call: Call; mode?: Mode; host?: boolean; expect?: "equal" | DeclaredId }
  /** Plain writes on both sides; `tolerant` lets a write fail (the same way on both sides). */
  | { kind: "seed"; commands: SeedArg[][]; tolerant?: boolean }
  | { kind: "wait"; ms: number }
  | { kind: "brand"; value: string | null | "hash" }
  /**
   * A call where the node is short of something: over `maxmemory` (compared as usual: admissions
   * refused on both sides, drains run), on a fresh read-only replica (both refuse `READONLY`), or
   * on a writable replica (D5).
   */
  | { kind: "guard"; guard: "oom" | "replica" | "writable-replica"; call: Call }
  | { kind: "check"; verb: string; what: string; fn: (last: LastStep) => string[]; declared?: DeclaredId }
  | { kind: "install"; brand: string | null | "hash"; tail?: string[] };

/** The last step's native view, for explicit checks. */
export interface LastStep {
  reply: Reply;
  window: Window;
  before: RawDump;
  after: RawDump;
  side: Side;
}

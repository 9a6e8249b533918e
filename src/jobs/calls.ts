/**
 * Calls from the data: a verb's keys come from its declared key slots (`protocol/verbs/<verb>.json`)
 * and a queue name (and, for a verb whose keys hold the job row, the job's id), so no call site
 * writes a verb's key list by hand. `call` runs the verb on the connection's engine.
 */
import type { Arg, Connection } from "../connector/connection.js";
import type { VerbCall } from "../engine/engine.js";
import { assertValidBrandedId } from "../branded-id.js";
import { keyOf } from "../keyspace.js";
import { PROTOCOL, type KeySlot } from "../verbs/data.js";
import type { VerbName } from "../verbs/names.js";
import { verbSpec } from "../verbs/index.js";

export type { VerbName } from "../verbs/names.js";

type Slotter = (queue: string, id: string | undefined, verb: string) => string;

function slotter(slot: KeySlot): Slotter {
  if (slot === "version") return () => PROTOCOL.brands.key;
  if (slot === "row") {
    return (queue, id, verb) => {
      if (id === undefined) throw new Error(`the keys of ${verb} hold the job row: give the job's id`);
      return keyOf(queue, "row", id);
    };
  }
  return (queue) => keyOf(queue, slot);
}

const BUILDERS = new Map<string, readonly Slotter[]>();

function builders(verb: VerbName): readonly Slotter[] {
  let made = BUILDERS.get(verb);
  if (!made) {
    made = verbSpec(verb).keys.map((k) => slotter(k.slot));
    BUILDERS.set(verb, made);
  }
  return made;
}

/**
 * The verb's keys for `queue`, in the order its data declares them (`id` names the job row, taken
 * as given: a test or the harness may send an id the server refuses). `call` checks the id first.
 */
export function keysOf(verb: VerbName, queue: string, id?: string): string[] {
  return builders(verb).map((make) => make(queue, id, verb));
}

/**
 * Runs `verb` on `queue`: its keys from the data, then `values`; `id` names the job row for a verb
 * whose keys hold it (ENQUEUE, ADD, PARENT, FIRE). A refusal is thrown as its typed error.
 */
export function call(
  conn: Connection,
  verb: VerbName,
  queue: string,
  values: readonly Arg[],
  id?: string,
): Promise<unknown> {
  return conn.engine.run(verb, checkedKeys(verb, queue, id), values);
}

/** The call as a batch takes it (`engine.runBatch`): the verb, its keys from the data, `values`. */
export function verbCall(verb: VerbName, queue: string, values: readonly Arg[], id?: string): VerbCall {
  return { verb, keys: checkedKeys(verb, queue, id), values };
}

/** The keys of a host call: a job row's id is a branded id (`InvalidIdError` otherwise). */
function checkedKeys(verb: VerbName, queue: string, id: string | undefined): string[] {
  if (id !== undefined) assertValidBrandedId(id);
  return keysOf(verb, queue, id);
}

/**
 * The script side's bodies: assembled from the pinned commit and verified (harness/pins.ts),
 * keyed by the verb they implement. Nothing here reads src/scripts at run time except to check
 * that the working tree still assembles the pinned bodies.
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { PinError, readPins, verifyPins } from "./pins.js";
import { VERBS } from "./verbs.js";

/** The repository this harness lives in. */
export const REPO = fileURLToPath(new URL("..", import.meta.url));
export const PINS_FILE = join(REPO, "harness", "pins.json");

export interface Bodies {
  commit: string;
  /** verb (e.g. `CLAIM`) → the pinned body of its script. */
  byVerb: Map<string, Buffer>;
}

export function loadBodies(repo = REPO, pinsFile = PINS_FILE): Bodies {
  const pins = readPins(pinsFile);
  const bodies = verifyPins(repo, pins);
  const byVerb = new Map<string, Buffer>();
  for (const verb of VERBS) {
    if (verb.script === null) continue;
    const body = bodies.get(verb.script);
    if (body === undefined) throw new PinError(`no pinned body for ${verb.script}.lua (EMQ.${verb.verb})`);
    byVerb.set(verb.verb, body);
  }
  return { commit: pins.commit, byVerb };
}

/**
 * The client names a worker gives its sockets (`CLIENT SETNAME`): `emq-wake-<queue>…` for a
 * queue's wake subscriber (how `CLIENT LIST` finds workers per queue, with what each announces:
 * `src/observe/worker-name.ts`), `emq-lane-<lane>` for a laned queue's other lanes, `emq-block-<queue>` for its blocking claim.
 * Pure.
 */
import { clientNamePart } from "../observe/worker-name.js";

export { clientNamePart, fromClientNamePart, wakeClientName } from "../observe/worker-name.js";

/** The name of a worker's blocking-claim connection. */
export const blockClientName = (queue: string): string => `emq-block-${clientNamePart(queue)}`;

/** The name of a laned queue's other lanes' subscribers. */
export const laneClientName = (lane: string): string => `emq-lane-${clientNamePart(lane)}`;

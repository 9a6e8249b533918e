/**
 * A server refusal in the words of the call that met it. The host steps throw the server's own
 * text (`ERR EMQ.EXPEDITE job is not scheduled`: the verb's name, the protocol's words); the
 * `Queue` and `Job` methods say it as their caller wrote it — `promote(JOB…): job JOB… is not
 * scheduled (it is pending)` — in an error of the same class, whose `reply` is still the server's
 * text and whose `cause` is the host step's error.
 */
import type { Connection } from "../connector/connection.js";
import {
  JobActiveError,
  JobNotDeadError,
  JobNotFoundError,
  JobNotScheduledError,
  LeaseLostError,
  ServerError,
} from "../errors.js";
import { jobKey } from "../keyspace.js";

type Refusal = new (reply: string, cause?: unknown) => ServerError;

/** What each refusal says, given the call, the job and (read after the refusal) its state. */
const SAYS = new Map<Refusal, (id: string, queue: string, state: string, err: ServerError) => string>([
  [JobNotFoundError, (id, queue) => `no job ${id} in queue ${JSON.stringify(queue)}`],
  [JobNotScheduledError, (id, _, state) => `job ${id} is not scheduled (${stateText(state)})`],
  [
    JobNotDeadError,
    (id, _, state) => `job ${id} is not dead (${stateText(state)}): only a dead job can be retried`,
  ],
  [JobActiveError, (id) => `job ${id} is active (a worker holds its lease): remove it once it has finished`],
  [
    LeaseLostError,
    (id, _, state, err) =>
      `this worker's lease on job ${id} is lost (${lostHow(state, err as LeaseLostError)}): it can change nothing about the job any more`,
  ],
]);

function stateText(state: string): string {
  return state === "" ? "it no longer exists" : `it is ${state}`;
}

function lostHow(state: string, err: LeaseLostError): string {
  if (err.reason === "stale token") return "it was claimed again since";
  return state === "active" ? "it left the active set" : stateText(state);
}

/**
 * Runs `step`; a typed refusal it throws comes back in `call`'s words (`call` as the caller
 * wrote it, e.g. `promote(JOB…)`). `lane` is where the job lives; `queue` the name to print.
 */
export async function inCallWords<T>(
  call: string,
  conn: Connection,
  where: { queue: string; lane: string; id: string },
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const says = err instanceof ServerError ? SAYS.get(err.constructor as Refusal) : undefined;
    if (!says || !(err instanceof ServerError)) throw err;
    const { queue, lane, id } = where;
    const state = await conn.send("HGET", [jobKey(lane, id), "state"]).then(
      (s) => (s == null ? "" : String(s)),
      () => "unknown",
    );
    const spoken = new (err.constructor as Refusal)(err.reply, err);
    spoken.message = `${call}: ${says(id, queue, state, err)}`;
    throw spoken;
  }
}

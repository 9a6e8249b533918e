/**
 * What a step's replies carry that the comparison reads apart: a time in the reply (a deadline, a
 * due time) and the rows a claim leased.
 */
import { tokenizeReply, type Window } from "./compare.js";
import { queueOf, type Call, type Side } from "./executors.js";
import type { Reply } from "./resp.js";
import { rowKey, type Verb, verbOf } from "./verbs.js";

/** A reply with its time (a deadline, a due time) as a token when it is in the window. */
export function timedReply(
  verb: Verb,
  values: readonly Buffer[],
  reply: Reply,
  window: Window,
  step: number,
  issues: string[],
): Reply {
  const at = verb.replyTime;
  if (!at || reply.t === "error") return reply;
  if (at.index !== null && (reply.t !== "array" || reply.v.length === 0)) return reply;
  const offset = Number(values[at.offset]?.toString("latin1"));
  const one = (r: Reply) => tokenizeReply(r, { index: at.index, offset }, window, step, issues);
  if (at.each && reply.t === "array") {
    const after = at.after ?? 0;
    return { t: "array", v: reply.v.map((r, i) => (i >= after && r.t === "array" ? one(r) : r)) };
  }
  return one(reply);
}

/** The rows a claim leased on `side`: the row of each id its reply names. */
export function leasedRows(verb: Verb, call: Call, reply: Reply, side: Side): string[] {
  if ((verb.verb === "CLAIMN" || verb.verb === "COMPLETEN") && reply.t === "array") {
    // COMPLETEN's jobs follow its outcomes.
    const jobs = verb.verb === "COMPLETEN" ? reply.v.slice(1) : reply.v;
    return jobs.flatMap((job) => (job.t === "array" ? leasedRows(verbOf("CLAIM"), call, job, side) : []));
  }
  // The leased id: CLAIM's reply's first element; a …NEXT's second (after the settlement's).
  const at = verb.verb === "CLAIM" ? 0 : verb.verb === "COMPLETENEXT" || verb.verb === "FAILNEXT" ? 1 : -1;
  const id = reply.t === "array" ? reply.v[at] : undefined;
  if (id?.t !== "bulk") return [];
  const q = queueOf(call);
  return q === null ? [] : [rowKey(side.name(q), id.v).toString("latin1")];
}

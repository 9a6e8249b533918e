/**
 * `FlowProducer`: adds a flow — a parent job and its children, which may live in other queues
 * (on a cluster, other slots and shards), and children of children. A parent runs once every
 * child has settled; each child's completion or death reaches its parent through the child
 * queue's outbox and a relay (src/flows/relay.ts).
 *
 * Order of writes: each parent first, waiting for its full count of children, then its children.
 * A crash mid-way leaves a parent that waits for children never added (it never runs early);
 * adding the same flow again with the same ids (`opts.id` on every node) adds what is missing
 * and nothing twice (an id that exists is a duplicate).
 */
import { newId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { type AddOptions, add } from "../jobs/admission.js";
import { assertJobId, assertOptions, assertPayload, type Payload, typeOf } from "../jobs/common.js";
import { addParent, type ChildFailurePolicy, type ParentRef, parentValues } from "../jobs/flows.js";
import { assertValidQueue } from "../keyspace.js";

/**
 * A flow job's options: a leaf child takes `add`'s but an idempotency key (a flow's idempotency
 * is its ids) and `parent` (the flow's); a job with children takes `id`, `priority`,
 * `maxAttempts` and `onChildFailure` only (any other is refused).
 */
export interface FlowJobOptions extends Omit<AddOptions, "parent" | "durability"> {
  /** Your own branded id: adding the same flow again then adds only what is missing. */
  id?: string;
  /** A job with children: what a dead child does to it. `fail` (default): the job dies, naming the child; `ignore`: it counts as settled. */
  onChildFailure?: ChildFailurePolicy;
}

/** The options a job with children does not take (its row is written by `PARENT`). */
const LEAF_ONLY = [
  "delay",
  "trace",
  "group",
  "key",
  "keyTtlMs",
  "timeoutMs",
  "parent",
  "durability",
] as const;

export interface FlowJob {
  queue: string;
  payload: Payload;
  opts?: FlowJobOptions;
  /** Children: this job waits in `waiting` until each has completed (or died, see `onChildFailure`). */
  children?: FlowJob[];
}

export interface FlowNode {
  queue: string;
  id: string;
  /** The id existed already: nothing was written for this job. */
  duplicate: boolean;
  children: FlowNode[];
}

/** The most jobs one flow may hold (every level). */
export const MAX_FLOW_JOBS = 100_000;

interface Checked {
  queue: string;
  id: string;
  payload: Payload;
  /** `PARENT`'s values (a parent), or the add options (a leaf). */
  parentValues: string[] | null;
  opts: FlowJobOptions;
  children: Checked[];
}

export class FlowProducer {
  constructor(private readonly conn: Connection) {}

  /** Adds the flow (every job checked first; nothing is sent when one is refused). */
  async add(flow: FlowJob): Promise<FlowNode> {
    const count = { jobs: 0 };
    return this.write(check(flow, "flow.", undefined, count), undefined);
  }

  private async write(job: Checked, parent: ParentRef | undefined): Promise<FlowNode> {
    if (job.parentValues === null) {
      const { id, duplicate } = await addChild(this.conn, job, parent);
      return { queue: job.queue, id, duplicate, children: [] };
    }
    const added = await addParent(this.conn, job.queue, job.id, job.payload, job.parentValues);
    const me = { queue: job.queue, id: job.id };
    const children = await Promise.all(job.children.map((child) => this.write(child, me)));
    return { queue: job.queue, id: job.id, duplicate: !added, children };
  }
}

/** A leaf: `add` with its parent (`ADD`'s `<parent>`: the row's `parent`, in the same write). */
function addChild(
  conn: Connection,
  job: Checked,
  parent: ParentRef | undefined,
): Promise<{ id: string; duplicate: boolean }> {
  const { onChildFailure: _, ...opts } = job.opts;
  return add(conn, job.queue, job.payload, { ...opts, id: job.id, ...(parent ? { parent } : {}) });
}

function check(job: unknown, where: string, parent: ParentRef | undefined, count: { jobs: number }): Checked {
  const o = assertOptions(job, where.slice(0, -1));
  count.jobs += 1;
  if (count.jobs > MAX_FLOW_JOBS)
    throw new InvalidArgumentError("flow", `must hold at most ${MAX_FLOW_JOBS} jobs`);
  if (typeof o.queue !== "string")
    throw new InvalidArgumentError(`${where}queue`, `must be a queue name, got ${typeOf(o.queue)}`);
  assertValidQueue(o.queue);
  assertPayload(o.payload, `${where}payload`);
  const opts = assertOptions(o.opts, `${where}opts`) as FlowJobOptions;
  if (opts.id !== undefined) assertJobId(opts.id);
  const id = opts.id ?? newId();
  const children = o.children === undefined ? [] : o.children;
  if (!Array.isArray(children))
    throw new InvalidArgumentError(`${where}children`, `must be an array, got ${typeOf(children)}`);
  const me = { queue: o.queue, id };
  if (children.length === 0) {
    if (opts.onChildFailure !== undefined)
      throw new InvalidArgumentError(`${where}opts.onChildFailure`, "is for a job with children");
    if ((opts as Record<string, unknown>).parent !== undefined)
      throw new InvalidArgumentError(`${where}opts.parent`, "is the flow's: leave it out");
    // A key held by another job would answer that job's id: not this parent's child, and the
    // parent would wait for it forever. A flow's idempotency is its ids (`opts.id`).
    for (const name of ["key", "keyTtlMs"] as const) {
      if (opts[name] !== undefined)
        throw new InvalidArgumentError(
          `${where}opts.${name}`,
          "is not an option of a flow's job: give ids (opts.id) instead",
        );
    }
    return { queue: o.queue, id, payload: o.payload, parentValues: null, opts, children: [] };
  }
  for (const name of LEAF_ONLY) {
    if ((opts as Record<string, unknown>)[name] !== undefined)
      throw new InvalidArgumentError(`${where}opts.${name}`, "is not an option of a job with children");
  }
  const values = parentValues(children.length, { ...opts, parent }, `${where}opts.`);
  const checked = children.map((child, i) => check(child, `${where}children[${i}].`, me, count));
  return { queue: o.queue, id, payload: o.payload, parentValues: values, opts, children: checked };
}

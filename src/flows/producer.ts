/**
 * `FlowProducer`: adds a flow — a parent job and its children, which may live in other queues
 * (on a cluster, other slots and shards), and children of children. A parent runs once every
 * child has settled; each child's completion or death reaches its parent through the child
 * queue's outbox and a relay (src/flows/relay.ts).
 *
 * The whole flow is checked first, without recursion (any depth up to `MAX_FLOW_JOBS` jobs): each
 * job's fields and options, then its shape — a job id once per queue, each node object once (no
 * cycle, no shared child) — `InvalidFlowError` for a shape refused, before anything is sent.
 *
 * Order of writes: a level at a time, each parent waiting for its full count of children before
 * any of them is written. A crash mid-way leaves a parent that waits for children never added (it never runs early);
 * adding the same flow again with the same ids (`opts.id` on every node) adds what is missing
 * and nothing twice (an id that exists is a duplicate).
 */
import { newId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError, InvalidFlowError } from "../errors.js";
import { ADD_OPTIONS, type AddOptions, add, checkAdd } from "../jobs/jobs.js";
import { assertJobId, assertOptions, assertPayload, type Payload, typeOf } from "../jobs/common.js";
import { addParent, type ChildFailurePolicy, type ParentRef, parentValues } from "../jobs/flows.js";
import { assertValidQueue } from "../keyspace.js";
import { FIXED_KEYSPACE, checkKeys, type OptionTable } from "../option-keys.js";

/**
 * A flow job's options: a leaf child takes `add`'s but an idempotency key (a flow's idempotency
 * is its ids) and `parent` (the flow's); a job with children takes `id`, `priority`,
 * `maxAttempts`, `onChildFailure`, `name` and `backoff` only (any other is refused).
 */
export interface FlowJobOptions extends Omit<AddOptions, "parent" | "durability"> {
  /**
   * Your own branded id: adding the same flow again then adds only what is missing. Once per queue
   * in a flow (one id in two queues is two jobs); a repeat is refused (`InvalidFlowError`).
   */
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

/** The keys of a flow's node, of a leaf's options (`add`'s strict check) and of a parent's. */
const NODE: OptionTable = {
  of: "a flow's job",
  keys: { queue: "string", payload: "any", opts: "object", children: "array" },
  foreign: {
    queueName: "queue",
    data: "payload",
    name: "a job's name is an option: opts.name",
    prefix: FIXED_KEYSPACE,
  },
};
const { durability: _, parent: __, ...leafKeys } = ADD_OPTIONS.keys;
const LEAF: OptionTable = { ...ADD_OPTIONS, of: "a flow's job", keys: leafKeys };
const PARENT: OptionTable = {
  ...ADD_OPTIONS,
  of: "a job with children",
  keys: {
    id: "any",
    priority: "number",
    maxAttempts: "number",
    onChildFailure: "string",
    name: ADD_OPTIONS.keys.name!,
    backoff: ADD_OPTIONS.keys.backoff!,
  },
};

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

/** The most jobs one flow may hold (every level, at any depth). */
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
    return write(this.conn, checkFlow(flow));
  }
}

/**
 * Writes a checked flow a level at a time (no recursion: a flow may be 100,000 deep): each
 * level's jobs once every parent above them was written, so no child can settle before its parent
 * exists.
 */
async function write(conn: Connection, root: Checked): Promise<FlowNode> {
  const top: FlowNode = { queue: root.queue, id: root.id, duplicate: false, children: [] };
  let level: { job: Checked; node: FlowNode; parent: ParentRef | undefined }[] = [
    { job: root, node: top, parent: undefined },
  ];
  while (level.length > 0) {
    const next: typeof level = [];
    await Promise.all(
      level.map(async ({ job, node, parent }) => {
        if (job.parentValues === null) {
          node.duplicate = (await addChild(conn, job, parent)).duplicate;
          return;
        }
        node.duplicate = !(await addParent(conn, job.queue, job.id, job.payload, job.parentValues));
        const me = { queue: job.queue, id: job.id };
        for (const child of job.children) {
          const childNode: FlowNode = { queue: child.queue, id: child.id, duplicate: false, children: [] };
          node.children.push(childNode);
          next.push({ job: child, node: childNode, parent: me });
        }
      }),
    );
    level = next;
  }
  return top;
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

/** A job met on the walk: its place (for errors), the object it came from, and its parent's. */
interface Visit {
  job: unknown;
  path: Path;
  up: Visit | undefined;
  parent: Checked | undefined;
}

/**
 * Checks the whole flow with an explicit stack (any depth), in document order: each job (`checkJob`),
 * then its shape — no node object met twice (a cycle, or a child shared by two parents), no job id
 * twice in one queue (ids name a job within its queue: one id in two queues is two jobs), at most
 * `MAX_FLOW_JOBS` jobs, counted as each `children` array is read. Throws the first refusal.
 */
function checkFlow(flow: unknown): Checked {
  const objects = new Map<object, Path>();
  const ids = new Map<string, Path>();
  let jobs = 1;
  let root: Checked | undefined;
  const stack: Visit[] = [{ job: flow, path: ROOT, up: undefined, parent: undefined }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { job, path, parent } = visit;
    if (typeof job === "object" && job !== null) {
      const first = objects.get(job);
      if (first !== undefined) throw repeatedObject(visit, first);
      objects.set(job, path);
    }
    const me = parent ? { queue: parent.queue, id: parent.id } : undefined;
    const { checked, children } = checkJob(job, path.text, me);
    const name = `${checked.queue}\0${checked.id}`;
    const taken = ids.get(name);
    if (taken !== undefined)
      throw new InvalidFlowError(
        path.text,
        `job id ${checked.id} in queue ${JSON.stringify(checked.queue)} is ${taken.text}'s id too: every job of a flow needs its own id (a repeated id is a duplicate, never added, and its parent would wait for it forever)`,
      );
    ids.set(name, path);
    jobs += children.length;
    if (jobs > MAX_FLOW_JOBS)
      throw new InvalidFlowError(
        "flow",
        `holds more than ${MAX_FLOW_JOBS} jobs (every level): split it, or add the jobs in several flows`,
      );
    if (parent) parent.children.push(checked);
    else root = checked;
    for (let i = children.length - 1; i >= 0; i--)
      stack.push({ job: children[i], path: childPath(path, i), up: visit, parent: checked });
  }
  return root!;
}

/** A node object met again: on the way from the root to it (a cycle), or elsewhere (shared). */
function repeatedObject(visit: Visit, first: Path): InvalidFlowError {
  for (let up = visit.up; up; up = up.up) {
    if (up.job === visit.job)
      return new InvalidFlowError(
        visit.path.text,
        `is ${up.path.text} again (a cycle): a flow is a tree, each job one object`,
      );
  }
  return new InvalidFlowError(
    visit.path.text,
    `is the object of ${first.text} again: a flow is a tree, each job one object (one job has one parent; give each its own object)`,
  );
}

/** A job's place in the flow as errors name it; a deep one by its first levels and its last. */
interface Path {
  text: string;
  depth: number;
  /** The text of the first `HEAD_LEVELS` levels. */
  head: string;
}

const HEAD_LEVELS = 3;
const ROOT: Path = { text: "flow", depth: 0, head: "flow" };

/** `flow.children[0].children[2]`; deeper than `HEAD_LEVELS + 1`, `flow.children[0]….<19996 levels>.children[1]`. */
function childPath(parent: Path, i: number): Path {
  const depth = parent.depth + 1;
  if (depth <= HEAD_LEVELS + 1) {
    const text = `${parent.text}.children[${i}]`;
    return { text, depth, head: depth <= HEAD_LEVELS ? text : parent.text };
  }
  const text = `${parent.head}.<${depth - HEAD_LEVELS - 1} levels>.children[${i}]`;
  return { text, depth, head: parent.head };
}

/**
 * One job checked (typed errors naming `where`, its path), its children not yet: its queue,
 * payload, id and options (`jobOptions`) → the job, and its `children` array as given.
 */
function checkJob(
  job: unknown,
  where: string,
  parent: ParentRef | undefined,
): { checked: Checked; children: unknown[] } {
  const o = checkKeys(job ?? null, NODE, where, `${where}.`);
  if (typeof o.queue !== "string")
    throw new InvalidArgumentError(`${where}.queue`, `must be a queue name, got ${typeOf(o.queue)}`);
  assertValidQueue(o.queue);
  assertPayload(o.payload, `${where}.payload`);
  const children = o.children === undefined ? [] : o.children;
  if (!Array.isArray(children))
    throw new InvalidArgumentError(`${where}.children`, `must be an array, got ${typeOf(children)}`);
  const { opts, id, parentValues } = jobOptions(o.opts, where, children.length, parent);
  if (parentValues === null) checkAdd(o.payload, opts, `${where}.opts.`, LEAF);
  return { checked: { queue: o.queue, id, payload: o.payload, parentValues, opts, children: [] }, children };
}

/**
 * A job's `opts`, checked (every node's options pass here): a leaf's (`children` 0) are `add`'s
 * but `key`, `keyTtlMs` and `parent`; a parent's are `id`, `priority`, `maxAttempts`,
 * `onChildFailure`, `name` and `backoff` → the options, the job's id (`opts.id`, or a new one), and a parent's
 * `PARENT` values (`null` for a leaf).
 */
function jobOptions(
  given: unknown,
  where: string,
  children: number,
  parent: ParentRef | undefined,
): { opts: FlowJobOptions; id: string; parentValues: string[] | null } {
  const opts = assertOptions(given, `${where}.opts`) as FlowJobOptions;
  if (opts.id !== undefined) assertJobId(opts.id);
  const id = opts.id ?? newId();
  if (children === 0) {
    if (opts.onChildFailure !== undefined)
      throw new InvalidArgumentError(`${where}.opts.onChildFailure`, "is for a job with children");
    if ((opts as Record<string, unknown>).parent !== undefined)
      throw new InvalidArgumentError(`${where}.opts.parent`, "is the flow's: leave it out");
    // A key held by another job would answer that job's id: not this parent's child, and the
    // parent would wait for it forever. A flow's idempotency is its ids (`opts.id`).
    for (const name of ["key", "keyTtlMs"] as const) {
      if (opts[name] !== undefined)
        throw new InvalidArgumentError(
          `${where}.opts.${name}`,
          "is not an option of a flow's job: give ids (opts.id) instead",
        );
    }
    return { opts, id, parentValues: null };
  }
  for (const name of LEAF_ONLY) {
    if ((opts as Record<string, unknown>)[name] !== undefined)
      throw new InvalidArgumentError(`${where}.opts.${name}`, "is not an option of a job with children");
  }
  checkKeys(opts, PARENT, `${where}.opts`, `${where}.opts.`);
  return { opts, id, parentValues: parentValues(children, { ...opts, parent }, `${where}.opts.`) };
}

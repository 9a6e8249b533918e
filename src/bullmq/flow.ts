/**
 * BullMQ's `FlowProducer` over EchoMQ's (src/flows/producer.ts): a flow of `{ name, queueName,
 * data, opts, children }` nodes becomes the core's flow: each job, leaf or parent, a core job with
 * its row's name and backoff and its data as the payload's JSON (a parent an older release wrote
 * as an envelope still reads: src/bullmq/codec.ts); the parent runs once every child has
 * completed, and fails when a child fails (EchoMQ's policy).
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertLabel } from "../jobs/add-options.js";
import { type FlowJob, type FlowNode, FlowProducer as CoreFlowProducer } from "../flows/producer.js";
import { Queue as CoreQueue } from "../queue.js";
import { encodeData } from "./codec.js";
import { Job, type JobHome } from "./job.js";
import { Link } from "./link.js";
import {
  addOptions,
  checkNames,
  type ConnectionOptions,
  jobOptions,
  type JobsOptions,
  refusal,
} from "./options.js";

export interface FlowJobNode {
  name: string;
  queueName: string;
  data?: unknown;
  opts?: JobsOptions;
  children?: FlowJobNode[];
  [refused: string]: unknown;
}

export interface JobNode {
  job: Job;
  children?: JobNode[];
}

export class FlowProducer {
  private readonly link: Link;

  constructor(opts: { connection?: ConnectionOptions; [refused: string]: unknown } = {}) {
    const o = checkNames("FlowProducer options", opts, "opts");
    this.link = new Link(o.connection);
  }

  /** Adds the flow: every child, then its parent, which runs once they have all completed. */
  async add(flow: FlowJobNode): Promise<JobNode> {
    const conn = await this.link.get();
    const added = await new CoreFlowProducer(conn).add(toCore(flow, "flow"));
    return fromCore(conn, flow, added);
  }

  async addBulk(flows: readonly FlowJobNode[]): Promise<JobNode[]> {
    const out: JobNode[] = [];
    for (const flow of flows) out.push(await this.add(flow));
    return out;
  }

  getFlow(_opts: unknown): Promise<never> {
    return Promise.reject(refusal("FlowProducer", "getFlow"));
  }

  async close(): Promise<void> {
    await this.link.close();
  }
}

function toCore(node: FlowJobNode, where: string): FlowJob {
  if (typeof node !== "object" || node === null)
    throw new InvalidArgumentError(where, "must be { name, queueName, data, opts, children }");
  for (const key of Object.keys(node))
    if (!["name", "queueName", "data", "opts", "children"].includes(key))
      throw new InvalidArgumentError(
        `${where}.${key}`,
        "a flow's job takes name, queueName, data, opts and children",
      );
  const o = jobOptions(undefined, node.opts, `${where}.opts`);
  if (o.jobId !== undefined || o.deduplication !== undefined)
    throw refusal("FlowProducer", "jobId in a flow");
  if (o.repeat !== undefined)
    throw new InvalidArgumentError(`${where}.opts.repeat`, "a flow's job does not repeat");
  // Leaf or parent, the core's job with its row's name and backoff (PARENT takes them as ADD does).
  if (typeof node.name === "string" && node.name !== "") assertLabel(`${where}.name`, node.name);
  const { core } = addOptions(o, node.name);
  const job: FlowJob = { queue: node.queueName, payload: encodeData(node.data), opts: core };
  if (node.children !== undefined) {
    if (!Array.isArray(node.children))
      throw new InvalidArgumentError(`${where}.children`, "must be an array");
    job.children = node.children.map((c, i) => toCore(c, `${where}.children[${i}]`));
  }
  return job;
}

function fromCore(conn: Connection, node: FlowJobNode, added: FlowNode): JobNode {
  const home: JobHome = { name: added.queue, core: async () => new CoreQueue(added.queue, conn) };
  const job = new Job(home, added.id, node.name, node.data, node.opts ?? {});
  const out: JobNode = { job };
  if (node.children !== undefined)
    out.children = added.children.map((c, i) => fromCore(conn, node.children![i]!, c));
  return out;
}

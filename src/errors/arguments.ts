/**
 * Input refused before anything is sent: a queue name or an id off its grammar, an argument of
 * the wrong type or range, a flow's shape, a value over its size bound (and the server's size
 * refusal, typed the same).
 */

import { EchoMQError } from "./base.js";

function describe(value: unknown): string {
  if (typeof value === "string") {
    if (value.length <= 80) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, 40))}… (${value.length} characters)`;
  }
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  return `(${value === null ? "null" : typeof value})`;
}

/** A queue name that would break the `emq:{q}:<type>` grammar (a brace or NUL), or not a string. */
export class InvalidQueueNameError extends EchoMQError {
  readonly queue: unknown;
  constructor(queue: unknown, rule: string) {
    super("EMQ_INVALID_QUEUE", `invalid queue name ${describe(queue)}: ${rule}`);
    this.queue = queue;
  }
}

/** An id that is not a branded id (`JOB` + 11 Base62 characters). */
export class InvalidIdError extends EchoMQError {
  readonly id: unknown;
  constructor(id: unknown, rule: string) {
    super("EMQ_INVALID_ID", `invalid job id ${describe(id)}: ${rule}`);
    this.id = id;
  }
}

/** A caller-supplied argument (lease, payload, option) of the wrong type or range. */
export class InvalidArgumentError extends EchoMQError {
  readonly argument: string;
  constructor(argument: string, message: string) {
    super("EMQ_INVALID_ARGUMENT", `invalid ${argument}: ${message}`);
    this.argument = argument;
  }
}

/**
 * A flow `FlowProducer.add` refuses for its shape, before anything is sent: a job id used twice
 * in one queue (the second would be a duplicate, and its parent would wait for it forever), a
 * node object used twice (a cycle, or a child shared by two parents), or more jobs than a flow
 * may hold. `argument` names the job (`flow.children[2]`, or `flow` for the bound).
 */
export class InvalidFlowError extends InvalidArgumentError {
  override readonly code: string = "EMQ_INVALID_FLOW";
}

/**
 * A value over its size bound (docs/protocol.md, "Value grammars": a payload or a result at most
 * 8 MiB, a progress value 64 KiB, a log line or an error text 16 KiB, each as the protocol data
 * declares): refused before it is sent, or by the server (`ERR EMQ.<VERB> <name> must be at most
 * <max> bytes`, then `reply` is its text and `bytes` is unknown). Nothing was written. Keep large
 * data elsewhere (a blob store, a table) and put a reference in the job.
 */
export class TooLargeError extends InvalidArgumentError {
  override readonly code: string = "EMQ_TOO_LARGE";
  /** The value's size in bytes (`undefined` when the server refused it). */
  readonly bytes: number | undefined;
  /** Its bound, in bytes. */
  readonly maxBytes: number;
  /** The server's refusal, when the server refused it. */
  readonly reply: string | undefined;
  constructor(
    argument: string,
    bytes: number | undefined,
    maxBytes: number,
    reply?: string,
    cause?: unknown,
  ) {
    super(
      argument,
      `${bytes === undefined ? `the server refused it (${reply})` : `${bytes} bytes`}, over its bound of ` +
        `${maxBytes} bytes: nothing was written. Keep large data elsewhere and pass a reference`,
    );
    if (cause !== undefined) this.cause = cause;
    this.bytes = bytes;
    this.maxBytes = maxBytes;
    this.reply = reply;
  }
}

const TOO_LARGE = /^ERR EMQ\.[A-Z]+ (.+) must be at most (\d+) bytes$/;

/** The typed error for a size-bound refusal of the server, or `null` for any other reply. */
export function tooLargeRefusal(reply: string, cause: unknown): TooLargeError | null {
  const match = TOO_LARGE.exec(reply);
  return match ? new TooLargeError(match[1] ?? "value", undefined, Number(match[2]), reply, cause) : null;
}

/**
 * `echomq/bullmq`: a BullMQ option, method or event this entry does not honour. Nothing was
 * written; `feature` names it as BullMQ does, `advice` says what to use instead
 * (docs/migrating-from-bullmq.md lists every name).
 */
export class BullMQRefusalError extends EchoMQError {
  constructor(
    readonly feature: string,
    readonly advice: string,
  ) {
    super("EMQ_BULLMQ_REFUSED", `echomq/bullmq does not honour ${feature}: ${advice}`);
  }
}

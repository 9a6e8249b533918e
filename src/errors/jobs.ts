/**
 * A job's data and outcome: a handler's `UnrecoverableError` (dead now, no retry), a payload that
 * cannot be read as data, and a wait for the outcome (`waitUntilFinished`) that saw the job die
 * or gave up.
 */

import { EchoMQError } from "./base.js";

/**
 * Thrown by a handler: the job fails at once to `dead`, without a retry, whatever attempts it has
 * left. An error whose `name` is `UnrecoverableError` counts too (another copy of the package, or
 * BullMQ's class). Its message is stored as the job's error like any failure's.
 */
export class UnrecoverableError extends EchoMQError {
  constructor(message = "unrecoverable", options?: { cause?: unknown }) {
    super("EMQ_UNRECOVERABLE", message, options);
  }
}

/**
 * Thrown by a handler after `await job.moveToDelayed(timestamp)`: the job is already in
 * `scheduled` (its lease released, no error written, its attempt counted), so the worker neither
 * completes nor fails it. Thrown without a `moveToDelayed` first, it fails the attempt like any
 * error. An error whose `name` is `DelayedError` counts too (BullMQ's class).
 */
export class DelayedError extends EchoMQError {
  constructor(message = "moved to delayed", options?: { cause?: unknown }) {
    super("EMQ_DELAYED", message, options);
  }
}

/**
 * A job's payload could not be read as its data (`job.data`): the serializer's `deserialize`
 * refused it — under the default `json`, a payload that is not JSON text (a string or bytes given
 * to `add` is stored as it is). Read `job.payload` / `job.text()`, or use the serializer it was
 * written with.
 */
export class InvalidDataError extends EchoMQError {
  readonly jobId: string;
  constructor(jobId: string, reason: string, cause?: unknown) {
    super(
      "EMQ_INVALID_DATA",
      `job ${jobId}: its payload cannot be read as data (${reason}). A string or bytes given to add is stored as it is: read job.payload or job.text(), or give the Worker the serializer the job was added with`,
      { cause },
    );
    this.jobId = jobId;
  }
}

/** `waitUntilFinished` saw the job die (`dead`): `failedReason` is its stored error text. */
export class JobFailedError extends EchoMQError {
  readonly jobId: string;
  readonly failedReason: string;
  /** The stack stored with the failure, when there is one. */
  readonly failedStack: string | undefined;
  constructor(jobId: string, failedReason: string, failedStack?: string) {
    super("EMQ_JOB_FAILED", `job ${jobId} failed for good (dead): ${failedReason}`);
    this.jobId = jobId;
    this.failedReason = failedReason;
    this.failedStack = failedStack;
  }
}

/**
 * `waitUntilFinished` gave up: the job had not finished within `ttlMs`, or it was removed (or
 * deleted by retention before its outcome could be read). Nothing about the job changed.
 */
export class WaitUntilFinishedError extends EchoMQError {
  readonly jobId: string;
  constructor(jobId: string, reason: string) {
    super("EMQ_WAIT_UNFINISHED", `job ${jobId}: ${reason}`);
    this.jobId = jobId;
  }
}

/** The command line's errors: a wrong command line, an operation that found nothing to act on. */

import { EchoMQError } from "./base.js";

/** The command line is wrong: unknown command or option, a missing or malformed argument. */
export class UsageError extends EchoMQError {
  constructor(
    message: string,
    /** The command whose usage to show (`--help` names it). */
    readonly command?: string,
  ) {
    super("EMQ_CLI_USAGE", message);
  }
}

/** An operation that found nothing to act on (`job <queue> <id>` of no such job). */
export class NotFoundError extends EchoMQError {
  constructor(message: string) {
    super("EMQ_CLI_NOT_FOUND", message);
  }
}

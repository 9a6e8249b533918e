/**
 * How the CLI fails: a usage error or bad input — an option, a queue name, an id (exit 2), a
 * connection that could not be made or was refused, or a command not sent (exit 3), anything else the operation met
 * (exit 1), each printed as one clear line.
 */
import {
  AuthError,
  ConnectionError,
  ConnectionLostError,
  EchoMQError,
  InvalidArgumentError,
  InvalidIdError,
  InvalidQueueNameError,
  VersionFenceError,
} from "../errors.js";

export const EXIT = { ok: 0, failed: 1, usage: 2, connection: 3 } as const;

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

/** The exit code and the message for an error the command ended with. */
export function failure(err: unknown): { code: number; message: string; errorCode: string } {
  const message = err instanceof Error ? err.message : String(err);
  const errorCode = err instanceof EchoMQError ? err.code : "EMQ_CLI_ERROR";
  const badInput = [UsageError, InvalidArgumentError, InvalidIdError, InvalidQueueNameError];
  if (badInput.some((type) => err instanceof type)) {
    return { code: EXIT.usage, message, errorCode };
  }
  if (err instanceof AuthError) {
    // The CLI takes credentials in the URL, not as connect() options.
    const said = `${AuthError.refused(err.host, err.port, err.reply)}: pass them in the URL, --url redis://user:password@host:port (or VALKEY_URL)`;
    return { code: EXIT.connection, message: said, errorCode };
  }
  if (
    err instanceof ConnectionError ||
    err instanceof VersionFenceError ||
    (err instanceof ConnectionLostError && !err.sent)
  ) {
    return { code: EXIT.connection, message, errorCode };
  }
  return { code: EXIT.failed, message, errorCode };
}

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
  UsageError,
  VersionFenceError,
} from "../errors.js";

export { NotFoundError, UsageError } from "../errors.js";

export const EXIT = { ok: 0, failed: 1, usage: 2, connection: 3 } as const;

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

/** The base of every EchoMQ error: a stable `code`, the original `cause`, a message that says what to do. */

export class EchoMQError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

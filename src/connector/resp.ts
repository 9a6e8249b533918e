/**
 * A minimal RESP session over a raw socket, used only while a socket is being booted and fenced
 * (before it is handed to the client library). One command at a time, replies in order.
 */
import type { Socket } from "node:net";
import Parser from "redis-parser";

export type RespReply = string | number | null | RespReply[] | RespError;

/** A `-ERR …` reply, kept as a value so the fence can inspect it. */
export class RespError {
  constructor(readonly message: string) {}
}

export function encodeCommand(args: readonly (string | Buffer | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from("\r\n"));
  }
  return Buffer.concat(parts);
}

export class RawSession {
  private readonly waiting: { resolve: (r: RespReply) => void; reject: (e: Error) => void }[] = [];
  private readonly parser: Parser;
  private failure: Error | null = null;
  private readonly onData = (chunk: Buffer) => this.parser.execute(chunk);
  private readonly onEnd = (err?: Error) => this.fail(err ?? new Error("connection closed during boot"));

  constructor(private readonly socket: Socket) {
    this.parser = new Parser({
      returnReply: (reply: RespReply) => this.waiting.shift()?.resolve(reply),
      returnError: (err: Error) => this.waiting.shift()?.resolve(new RespError(err.message)),
      returnFatalError: (err: Error) => this.fail(err),
    });
    socket.on("data", this.onData);
    socket.on("error", this.onEnd);
    socket.on("close", this.onEnd);
  }

  send(args: readonly (string | Buffer | number)[]): Promise<RespReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.write(encodeCommand(args));
    });
  }

  /** Stop listening; the socket is left open for its next owner. */
  detach(): void {
    this.socket.off("data", this.onData);
    this.socket.off("error", this.onEnd);
    this.socket.off("close", this.onEnd);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiting.splice(0)) w.reject(err);
  }
}

/**
 * RESP2, written once: the command encoder, a reply decoder that keeps each reply's RESP type
 * (a status `+OK` and a bulk `$2 OK` stay different replies), and the session that boots and
 * fences a raw socket before it is handed to the client library. The harness and the test helpers
 * build their own clients on these.
 */
import type { Socket } from "node:net";

export type RespArg = string | Buffer | number;

/** One reply with its RESP type. Status, error and integer lines are latin1 text (their bytes). */
export type Reply =
  | { t: "status"; v: string }
  | { t: "error"; v: string }
  | { t: "int"; v: string }
  | { t: "bulk"; v: Buffer }
  | { t: "nil" }
  | { t: "nilarray" }
  | { t: "array"; v: Reply[] };

const CRLF = Buffer.from("\r\n");

/** One command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly RespArg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

/** Bytes that are not RESP2: the stream cannot be read any further. `received`: the start of them. */
export class RespProtocolError extends Error {
  constructor(
    message: string,
    readonly received = "",
  ) {
    super(message);
  }
}

/** The first line of `buf` from `pos`, as printable ASCII, at most 60 characters. */
function printable(buf: Buffer, pos: number): string {
  const line = buf.toString("latin1", pos, pos + 60).split(/\r?\n/, 1)[0] ?? "";
  return line.replace(/[^\x20-\x7e]/g, "?");
}

/** Parses one reply at `pos`: the reply and where the next starts, or null while it is incomplete. */
export function parseReply(buf: Buffer, pos: number): [Reply, number] | null {
  const end = buf.indexOf(CRLF, pos);
  if (end < 0) return null;
  const line = buf.toString("latin1", pos + 1, end);
  const next = end + 2;
  switch (buf[pos]) {
    case 0x2b: // +
      return [{ t: "status", v: line }, next];
    case 0x2d: // -
      return [{ t: "error", v: line }, next];
    case 0x3a: // :
      return [{ t: "int", v: line }, next];
    case 0x24: {
      // $
      const len = Number(line);
      if (len < 0) return [{ t: "nil" }, next];
      if (buf.length < next + len + 2) return null;
      return [{ t: "bulk", v: Buffer.from(buf.subarray(next, next + len)) }, next + len + 2];
    }
    case 0x2a: {
      // *
      const len = Number(line);
      if (len < 0) return [{ t: "nilarray" }, next];
      const items: Reply[] = [];
      let at = next;
      for (let i = 0; i < len; i++) {
        const item = parseReply(buf, at);
        if (item === null) return null;
        items.push(item[0]);
        at = item[1];
      }
      return [{ t: "array", v: items }, at];
    }
    default:
      throw new RespProtocolError(
        `unexpected byte 0x${buf[pos]?.toString(16)} at ${pos}`,
        printable(buf, pos),
      );
  }
}

/** Accumulates socket data and hands out every complete reply, in order. */
export class ReplyStream {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Reply[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Reply[] = [];
    let pos = 0;
    while (pos < this.buf.length) {
      const parsed = parseReply(this.buf, pos);
      if (parsed === null) break;
      out.push(parsed[0]);
      pos = parsed[1];
    }
    this.buf = pos === 0 ? this.buf : this.buf.subarray(pos);
    return out;
  }
}

/** A server's `-ERR …` reply as a value (it is returned, not thrown). */
export class RespError extends Error {
  override name = "RespError";
}

/** A reply as plain values: text decoded as UTF-8 (or kept as bytes), integers as numbers. */
export type RespReply = string | Buffer | number | null | RespError | RespReply[];

/** `reply` as plain values; `buffers`: bulk and status replies stay bytes. */
export function toRespReply(reply: Reply, buffers = false): RespReply {
  const utf8 = (latin1: string) => Buffer.from(latin1, "latin1").toString();
  switch (reply.t) {
    case "status":
      return buffers ? Buffer.from(reply.v, "latin1") : utf8(reply.v);
    case "error":
      return new RespError(utf8(reply.v));
    case "int":
      return Number(reply.v);
    case "bulk":
      return buffers ? reply.v : reply.v.toString();
    case "nil":
    case "nilarray":
      return null;
    case "array":
      return reply.v.map((r) => toRespReply(r, buffers));
  }
}

interface Waiter {
  count: number;
  replies: Reply[];
  resolve: (replies: Reply[]) => void;
  reject: (err: Error) => void;
}

/**
 * Commands and their replies, in order, over a socket someone else opened. Once the socket
 * errors or closes, every pending and later call rejects with `closed(cause)`.
 */
export class RawSession {
  /** Replies no call waits for (MONITOR lines, pub/sub messages). */
  onPush: ((reply: Reply) => void) | null = null;
  private readonly waiting: Waiter[] = [];
  private readonly stream = new ReplyStream();
  private failure: Error | null = null;
  private readonly onData = (chunk: Buffer) => {
    let replies: Reply[];
    try {
      replies = this.stream.push(chunk);
    } catch (err) {
      this.fail(err as Error);
      this.socket.destroy();
      return;
    }
    for (const reply of replies) this.deliver(reply);
  };
  private readonly onError = (err: Error) => this.fail(this.closed(err));
  private readonly onClose = () => this.fail(this.closed());

  constructor(
    private readonly socket: Socket,
    private readonly closed: (cause?: Error) => Error = (cause) =>
      cause ?? new Error("connection closed during boot"),
  ) {
    socket.on("data", this.onData);
    socket.on("error", this.onError);
    socket.on("close", this.onClose);
  }

  /** Sends every command in one write; resolves with one reply per command (errors are replies). */
  call(commands: readonly (readonly RespArg[])[]): Promise<Reply[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (commands.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waiting.push({ count: commands.length, replies: [], resolve, reject });
      this.socket.write(Buffer.concat(commands.map(encodeCommand)));
    });
  }

  /** One command; its reply as plain values (the boot commands and the fence read these). */
  async send(args: readonly RespArg[]): Promise<RespReply> {
    const [reply] = await this.call([args]);
    return toRespReply(reply!);
  }

  /** Writes bytes as they are; their replies go to `onPush`. */
  write(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  /** Stop listening; the socket is left open for its next owner. */
  detach(): void {
    this.socket.off("data", this.onData);
    this.socket.off("error", this.onError);
    this.socket.off("close", this.onClose);
  }

  private deliver(reply: Reply): void {
    const w = this.waiting[0];
    if (w === undefined) {
      this.onPush?.(reply);
      return;
    }
    w.replies.push(reply);
    if (w.replies.length === w.count) {
      this.waiting.shift();
      w.resolve(w.replies);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
  }
}

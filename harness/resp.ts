/**
 * The harness's own RESP2 client. It keeps every reply's RESP type (status, error, integer,
 * bulk, nil, array), because the harness compares typed replies: a status `+pending` and a bulk
 * `$7 pending` are different replies, and a general-purpose client would fold them together.
 */
import net from "node:net";

export type Reply =
  | { t: "status"; v: string }
  | { t: "error"; v: string }
  | { t: "int"; v: string }
  | { t: "bulk"; v: Buffer }
  | { t: "nil" }
  | { t: "nilarray" }
  | { t: "array"; v: Reply[] };

export type Arg = string | Buffer | number;
export type Command = readonly Arg[];

const CRLF = Buffer.from("\r\n");

/** One command as a RESP array of bulk strings. */
export function encode(args: Command): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

/** Parses one reply at `pos`; null when the buffer does not hold all of it yet. */
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
      throw new Error(`RESP protocol error: unexpected byte 0x${buf[pos]?.toString(16)} at ${pos}`);
  }
}

/** Accumulates socket data and hands out every complete reply, in order. */
export class ReplyStream {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Reply[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Reply[] = [];
    let pos = 0;
    for (;;) {
      if (pos >= this.buf.length) break;
      const parsed = parseReply(this.buf, pos);
      if (parsed === null) break;
      out.push(parsed[0]);
      pos = parsed[1];
    }
    this.buf = pos === 0 ? this.buf : this.buf.subarray(pos);
    return out;
  }
}

interface Waiter {
  count: number;
  replies: Reply[];
  resolve: (replies: Reply[]) => void;
  reject: (err: Error) => void;
}

/** A persistent connection: `call` pipelines commands in one write and resolves with their replies. */
export class RespClient {
  private readonly waiting: Waiter[] = [];
  private readonly stream = new ReplyStream();
  private closedError: Error | null = null;
  /** Replies nobody waited for (pub/sub pushes on a subscriber). */
  onPush: ((reply: Reply) => void) | null = null;

  private constructor(
    private readonly socket: net.Socket,
    readonly label: string,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      for (const reply of this.stream.push(chunk)) this.deliver(reply);
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closedError = new Error(`connection to ${label} closed`);
      for (const w of this.waiting.splice(0)) w.reject(this.closedError);
    });
  }

  static connect(port: number, host = "127.0.0.1", timeoutMs = 10_000): Promise<RespClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connecting to ${host}:${port} timed out`));
      }, timeoutMs);
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(new Error(`could not connect to ${host}:${port}: ${err.message}`));
      });
      socket.once("connect", () => {
        clearTimeout(timer);
        resolve(new RespClient(socket, `${host}:${port}`));
      });
    });
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

  /** Sends every command in one write; resolves with one reply per command (errors are replies). */
  call(commands: readonly Command[]): Promise<Reply[]> {
    if (commands.length === 0) return Promise.resolve([]);
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      this.waiting.push({ count: commands.length, replies: [], resolve, reject });
      this.socket.write(Buffer.concat(commands.map(encode)));
    });
  }

  /** One command; its reply. */
  async one(...args: Arg[]): Promise<Reply> {
    const [reply] = await this.call([args]);
    return reply!;
  }

  /** Writes a command whose replies arrive as pushes (SUBSCRIBE and friends). */
  sendPushed(args: Command): void {
    this.socket.write(encode(args));
  }

  close(): Promise<void> {
    if (this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.destroy();
    });
  }
}

/** A message the subscriber saw: its channel and payload. */
export interface Published {
  channel: string;
  message: string;
}

/**
 * A pattern subscriber. `drain()` sends a PING and resolves, once its pong arrives, with every
 * message published before the PING was read (a connection's replies keep their order).
 */
export class Subscriber {
  private seen: Published[] = [];
  private pongs: (() => void)[] = [];
  private ready: (() => void) | null = null;

  private constructor(private readonly client: RespClient) {
    client.onPush = (reply) => this.onPush(reply);
  }

  static async connect(port: number, pattern: string): Promise<Subscriber> {
    const sub = new Subscriber(await RespClient.connect(port));
    await new Promise<void>((resolve) => {
      sub.ready = resolve;
      sub.client.sendPushed(["PSUBSCRIBE", pattern]);
    });
    return sub;
  }

  private onPush(reply: Reply): void {
    if (reply.t !== "array") return;
    const kind = text(reply.v[0]);
    if (kind === "psubscribe") {
      this.ready?.();
      this.ready = null;
    } else if (kind === "pmessage") {
      this.seen.push({ channel: text(reply.v[2]), message: text(reply.v[3]) });
    } else if (kind === "pong") {
      this.pongs.shift()?.();
    }
  }

  drain(): Promise<Published[]> {
    return new Promise((resolve) => {
      this.pongs.push(() => {
        const out = this.seen;
        this.seen = [];
        resolve(out);
      });
      this.client.sendPushed(["PING"]);
    });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** A bulk/status reply's bytes as latin1 text ("" for anything else). */
export function text(reply: Reply | undefined): string {
  if (reply === undefined) return "";
  if (reply.t === "bulk") return reply.v.toString("latin1");
  if (reply.t === "status" || reply.t === "int" || reply.t === "error") return reply.v;
  return "";
}

/** A reply that must not be an error (harness plumbing); throws with `what` otherwise. */
export function ok(reply: Reply | undefined, what: string): Reply {
  if (reply === undefined) throw new Error(`${what}: no reply`);
  if (reply.t === "error") throw new Error(`${what}: ${reply.v}`);
  return reply;
}

/** `TIME` as server milliseconds: seconds * 1000 + floor(microseconds / 1000). */
export function timeMs(reply: Reply | undefined): number {
  if (reply?.t !== "array" || reply.v.length !== 2) throw new Error("TIME: unexpected reply");
  return Number(text(reply.v[0])) * 1000 + Math.floor(Number(text(reply.v[1])) / 1000);
}

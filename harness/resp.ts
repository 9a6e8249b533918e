/**
 * The harness's RESP2 client, on the one encoder and decoder (`src/connector/resp.ts`). It keeps
 * every reply's RESP type, because the harness compares typed replies: a status `+pending` and a
 * bulk `$7 pending` are different replies, and a general-purpose client would fold them together.
 * The test helpers (`test/support/resp.ts`) build their plain-valued calls on it.
 */
import net from "node:net";
import { encodeCommand, RawSession, type Reply, type RespArg } from "../src/resp.js";

export type { Reply } from "../src/resp.js";
type Arg = RespArg;
export type Command = readonly Arg[];

export interface ClientOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Bound for connecting (and AUTH); default 10000 ms. */
  timeoutMs?: number;
  /** `AUTH [user] password` right after connecting; a refusal rejects. */
  user?: string;
  password?: string;
}

/** A persistent connection: `call` pipelines commands in one write and resolves with their replies. */
export class RespClient {
  /** Resolves when the socket has closed, for whatever reason. */
  readonly closed: Promise<void>;
  private isOpen = true;
  private readonly session: RawSession;

  private constructor(
    private readonly socket: net.Socket,
    readonly label: string,
  ) {
    socket.setNoDelay(true);
    this.session = new RawSession(socket, () => new Error(`connection to ${label} closed before the reply`));
    this.closed = new Promise((resolve) =>
      socket.once("close", () => {
        this.isOpen = false;
        resolve();
      }),
    );
  }

  static connect(port: number, o: ClientOptions = {}): Promise<RespClient> {
    const host = o.host ?? "127.0.0.1";
    const timeoutMs = o.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connecting to ${host}:${port} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(new Error(`could not connect to ${host}:${port}: ${err.message}`));
      });
      socket.once("connect", () => {
        const client = new RespClient(socket, `${host}:${port}`);
        client.authenticate(o).then(
          () => {
            clearTimeout(timer);
            resolve(client);
          },
          (err: Error) => {
            clearTimeout(timer);
            socket.destroy();
            reject(err);
          },
        );
      });
    });
  }

  private async authenticate(o: ClientOptions): Promise<void> {
    if (o.password === undefined) return;
    const reply = await this.one(...(o.user === undefined ? ["AUTH"] : ["AUTH", o.user]), o.password);
    if (reply.t === "error") throw new Error(`AUTH to ${this.label} failed: ${reply.v}`);
  }

  /** Replies nobody waited for (pub/sub pushes, MONITOR lines, replies to `write`). */
  set onPush(handler: ((reply: Reply) => void) | null) {
    this.session.onPush = handler;
  }

  get isClosed(): boolean {
    return !this.isOpen;
  }

  /** Sends every command in one write; resolves with one reply per command (errors are replies). */
  call(commands: readonly Command[]): Promise<Reply[]> {
    return this.session.call(commands);
  }

  /** One command; its reply. */
  async one(...args: Arg[]): Promise<Reply> {
    const [reply] = await this.call([args]);
    return reply!;
  }

  /** Writes a command whose replies arrive as pushes (SUBSCRIBE and friends). */
  sendPushed(args: Command): void {
    this.session.write(encodeCommand(args));
  }

  /** Writes raw bytes (half a command, say); their replies arrive as pushes. */
  write(bytes: Buffer | string): void {
    this.session.write(bytes);
  }

  close(): Promise<void> {
    if (this.socket.destroyed) return this.closed;
    this.socket.destroy();
    return this.closed;
  }
}

/** A message the subscriber saw: its channel and payload. */
interface Published {
  channel: string;
  message: string;
}

/**
 * A shard-channel subscriber (`SSUBSCRIBE`: the wake is published with `SPUBLISH`, which pattern
 * and plain subscriptions do not receive). `watch` subscribes channels (on a cluster: channels of
 * slots this node serves), `unwatch` ends them. `drain()` sends a PING and resolves, once its pong
 * arrives, with every message published before the PING was read (a connection's replies keep
 * their order).
 */
export class Subscriber {
  private seen: Published[] = [];
  /** What each reply that is not a message settles, in order: a (un)subscription, a pong. */
  private waiting: { kind: string; done: (error?: string) => void }[] = [];

  private constructor(private readonly client: RespClient) {
    client.onPush = (reply) => this.onPush(reply);
  }

  static async connect(port: number, host?: string): Promise<Subscriber> {
    return new Subscriber(await RespClient.connect(port, host === undefined ? {} : { host }));
  }

  private onPush(reply: Reply): void {
    // Outside a subscription PING answers +PONG; inside, ["pong", ""].
    const kind = reply.t === "array" ? text(reply.v[0]) : reply.t === "status" ? reply.v.toLowerCase() : "";
    if (kind === "smessage" && reply.t === "array") {
      this.seen.push({ channel: text(reply.v[1]), message: text(reply.v[2]) });
    } else if (reply.t === "error") {
      this.waiting.shift()?.done(reply.v);
    } else if (this.waiting[0]?.kind === kind) {
      this.waiting.shift()?.done();
    }
  }

  private expect(kind: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.waiting.push({
        kind,
        done: (error) => (error === undefined ? resolve() : reject(new Error(`${kind}: ${error}`))),
      }),
    );
  }

  /** `SSUBSCRIBE` each channel (one command each); resolves once the server confirmed them all. */
  async watch(channels: readonly string[]): Promise<void> {
    const confirmed = channels.map(() => this.expect("ssubscribe"));
    for (const channel of channels) this.client.sendPushed(["SSUBSCRIBE", Buffer.from(channel, "latin1")]);
    await Promise.all(confirmed);
  }

  /** `SUNSUBSCRIBE` each channel; resolves once the server confirmed them all. */
  async unwatch(channels: readonly string[]): Promise<void> {
    const confirmed = channels.map(() => this.expect("sunsubscribe"));
    for (const channel of channels) this.client.sendPushed(["SUNSUBSCRIBE", Buffer.from(channel, "latin1")]);
    await Promise.all(confirmed);
  }

  drain(): Promise<Published[]> {
    const pong = this.expect("pong");
    this.client.sendPushed(["PING"]);
    return pong.then(() => {
      const out = this.seen;
      this.seen = [];
      return out;
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

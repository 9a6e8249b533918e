/**
 * A TCP fault proxy for tests: sits between a client and a valkey-server on 127.0.0.1.
 *
 * It forwards bytes both ways, records every command each client sent (parsed from RESP;
 * pipelined and split chunks are reassembled per connection), and injects faults:
 *
 *   proxy.cut()                       destroy every current connection, both sides
 *   proxy.refuse(500)                 close new connections immediately for 500 ms
 *   proxy.swallowNext((a) => a[0] === "EVALSHA")
 *                                     drop the next matching command (never forwarded), then
 *                                     cut its connection shortly after: a command "in flight"
 *
 *   proxy.hold(); ...; proxy.release()
 *                                     buffer what clients send (replies still flow), then forward
 *                                     it in order: act "behind the back" of a client
 *   proxy.holdFrom((a) => …); ...; proxy.release()
 *                                     the same, from the first matching command on, on its
 *                                     connection only: a command that reaches the server later
 *
 *   proxy.loseReplyOf((a) => …)      forward the next matching command, drop every byte the server
 *                                     sends that connection from then on, and cut it shortly after:
 *                                     a call that ran whose reply is lost
 *
 *   const mark = proxy.mark();  ...;  proxy.since(mark)   commands that reached the server since
 */
import net from "node:net";
import { parseReply, RespProtocolError } from "../../src/resp.js";

interface ProxyOptions {
  targetPort: number;
  /** Defaults to 127.0.0.1. */
  targetHost?: string;
}

interface ProxyCommand {
  /** Position in the proxy-wide log (0-based); compare with `mark()`. */
  seq: number;
  /** Index of the proxied connection (0-based, in accept order). */
  conn: number;
  args: string[];
  /** False when the proxy swallowed it (or dropped it after a swallow on that connection). */
  forwarded: boolean;
  /** Date.now() when the proxy read it. */
  at: number;
}

type CommandPredicate = (args: string[]) => boolean;

interface SwallowOptions {
  /** Delay between swallowing and cutting the connection; default 20 ms. */
  cutAfterMs?: number;
}

export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  /** redis://127.0.0.1:port */
  readonly url: string;
  /** Every command read from clients, in order. */
  readonly commands: readonly ProxyCommand[];
  /** Connections accepted (and forwarded) / refused so far. */
  readonly stats: { accepted: number; refused: number; open: number };
  /** The current log position: `since(mark())` later returns only newer commands. */
  mark(): number;
  /** Commands logged at or after `mark` that were forwarded (all, with `includeDropped`). */
  since(mark: number, includeDropped?: boolean): ProxyCommand[];
  /** The arguments of every command connection `conn` sent, in order. */
  commandsOf(conn: number): string[][];
  /** Destroys all current connections, client and server side. */
  cut(): void;
  /** For `ms`, new connections are closed as soon as they are accepted. Resolves when it ends. */
  refuse(ms: number): Promise<void>;
  /**
   * Swallows the next client command matching `predicate` (default: any): it is not
   * forwarded, nor is anything that connection sends after it; the connection is cut
   * `cutAfterMs` later. Resolves with the swallowed command once the cut is done.
   */
  swallowNext(predicate?: CommandPredicate, opts?: SwallowOptions): Promise<ProxyCommand>;
  /**
   * Forwards the next client command matching `predicate`, then drops what the server sends that
   * connection from then on (the call's reply too) and cuts it `cutAfterMs` later: the server ran
   * the call, its reply is lost. Resolves with the command and the bytes dropped, once cut.
   */
  loseReplyOf(
    predicate: CommandPredicate,
    opts?: SwallowOptions,
  ): Promise<{ command: ProxyCommand; dropped: Buffer }>;
  /** From now on, what clients send is held back (nothing reaches the server); replies still flow. */
  hold(): void;
  /**
   * Holds back the next client command matching `predicate` and everything its connection sends
   * after it (other connections flow); resolves with it once held. `release()` forwards them.
   */
  holdFrom(predicate: CommandPredicate): Promise<ProxyCommand>;
  /** Forwards everything held, in order, and stops holding. */
  release(): void;
  /** Bytes clients sent that are held back now. */
  heldBytes(): number;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

const HOST = "127.0.0.1";

/* ------------------------------------------------------------------ RESP command framing */

interface Frame {
  args: Buffer[];
  end: number;
}

class FramingError extends Error {}

/** One `*N` array of bulk strings starting at `offset`; null when more bytes are needed. */
function readArrayFrame(buf: Buffer, offset: number): Frame | null {
  let parsed: ReturnType<typeof parseReply>;
  try {
    parsed = parseReply(buf, offset);
  } catch (err) {
    if (err instanceof RespProtocolError) throw new FramingError(err.message);
    throw err;
  }
  if (parsed === null) return null;
  const [reply, end] = parsed;
  if (reply.t !== "array") throw new FramingError(`expected an array, got ${reply.t}`);
  const args = reply.v.map((arg) => {
    if (arg.t !== "bulk") throw new FramingError(`expected bulk strings, got ${arg.t}`);
    return arg.v;
  });
  return { args, end };
}

/** An inline command (`PING\r\n`) starting at `offset`; null when the line is incomplete. */
function readInlineFrame(buf: Buffer, offset: number): Frame | null {
  const eol = buf.indexOf(0x0a, offset);
  if (eol === -1) return null;
  const line = buf.toString("latin1", offset, eol).replace(/\r$/, "");
  const args = line
    .split(/\s+/)
    .filter((word) => word.length > 0)
    .map((word) => Buffer.from(word, "latin1"));
  return { args, end: eol + 1 };
}

/** Parses one client command at `offset`: a RESP array, or an inline command. */
export function readCommandFrame(buf: Buffer, offset: number): Frame | null {
  if (offset >= buf.length) return null;
  return buf[offset] === 0x2a ? readArrayFrame(buf, offset) : readInlineFrame(buf, offset);
}

/* ------------------------------------------------------------------ connections */

interface Swallow {
  predicate: CommandPredicate;
  cutAfterMs: number;
  resolve: (command: ProxyCommand) => void;
}

interface Link {
  index: number;
  client: net.Socket;
  server: net.Socket;
  pending: Buffer;
  /** After a swallow nothing more from this client is forwarded. */
  doomed: boolean;
  /** The stream could not be framed: forward raw bytes, log nothing more. */
  raw: boolean;
  /** What the client sent while the proxy held. */
  held: Buffer[];
  /** This connection's commands are held (`holdFrom`). */
  holding: boolean;
  /** What the server sends is dropped, kept here (`loseReplyOf`). */
  deaf: Buffer[] | undefined;
}

interface LoseReply {
  predicate: CommandPredicate;
  cutAfterMs: number;
  resolve: (lost: { command: ProxyCommand; dropped: Buffer }) => void;
}

interface HoldFrom {
  predicate: CommandPredicate;
  resolve: (command: ProxyCommand) => void;
}

class FaultProxyImpl implements FaultProxy {
  readonly host = HOST;
  readonly commands: ProxyCommand[] = [];
  readonly stats = { accepted: 0, refused: 0, open: 0 };
  private readonly links = new Set<Link>();
  private readonly swallows: Swallow[] = [];
  private readonly loseReplies: LoseReply[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private refuseUntil = 0;
  private holding = false;
  private holdFromNext: HoldFrom | undefined;
  private nextIndex = 0;
  port = 0;

  constructor(
    private readonly server: net.Server,
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {
    server.on("connection", (socket) => this.accept(socket));
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  mark(): number {
    return this.commands.length;
  }

  since(mark: number, includeDropped = false): ProxyCommand[] {
    return this.commands.slice(mark).filter((c) => includeDropped || c.forwarded);
  }

  commandsOf(conn: number): string[][] {
    return this.commands.filter((c) => c.conn === conn).map((c) => c.args);
  }

  cut(): void {
    for (const link of [...this.links]) this.drop(link);
  }

  refuse(ms: number): Promise<void> {
    this.refuseUntil = Math.max(this.refuseUntil, Date.now() + ms);
    return new Promise<void>((resolve) => this.later(ms, resolve));
  }

  swallowNext(predicate: CommandPredicate = () => true, opts: SwallowOptions = {}): Promise<ProxyCommand> {
    return new Promise<ProxyCommand>((resolve) => {
      this.swallows.push({ predicate, cutAfterMs: opts.cutAfterMs ?? 20, resolve });
    });
  }

  loseReplyOf(
    predicate: CommandPredicate,
    opts: SwallowOptions = {},
  ): Promise<{ command: ProxyCommand; dropped: Buffer }> {
    return new Promise((resolve) => {
      this.loseReplies.push({ predicate, cutAfterMs: opts.cutAfterMs ?? 20, resolve });
    });
  }

  hold(): void {
    this.holding = true;
  }

  holdFrom(predicate: CommandPredicate): Promise<ProxyCommand> {
    return new Promise<ProxyCommand>((resolve) => {
      this.holdFromNext = { predicate, resolve };
    });
  }

  release(): void {
    this.holding = false;
    this.holdFromNext = undefined;
    for (const link of this.links) {
      link.holding = false;
      for (const chunk of link.held.splice(0)) this.fromClient(link, chunk);
    }
  }

  heldBytes(): number {
    let n = 0;
    for (const link of this.links) for (const chunk of link.held) n += chunk.length;
    return n;
  }

  close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.cut();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private accept(client: net.Socket): void {
    if (Date.now() < this.refuseUntil) {
      this.stats.refused += 1;
      client.on("error", () => {});
      client.destroy();
      return;
    }
    this.stats.accepted += 1;
    const server = net.connect({ host: this.targetHost, port: this.targetPort });
    const link: Link = {
      index: this.nextIndex++,
      client,
      server,
      pending: Buffer.alloc(0),
      doomed: false,
      raw: false,
      held: [],
      holding: false,
      deaf: undefined,
    };
    this.links.add(link);
    this.stats.open = this.links.size;
    client.setNoDelay(true);
    server.setNoDelay(true);
    client.on("data", (chunk: Buffer) => this.fromClient(link, chunk));
    server.on("data", (chunk: Buffer) => {
      if (link.deaf) link.deaf.push(chunk);
      else if (!client.destroyed) client.write(chunk);
    });
    for (const socket of [client, server]) {
      socket.on("error", () => this.drop(link));
      socket.on("close", () => this.drop(link));
    }
  }

  private drop(link: Link): void {
    if (!this.links.delete(link)) return;
    this.stats.open = this.links.size;
    link.client.destroy();
    link.server.destroy();
  }

  private fromClient(link: Link, chunk: Buffer): void {
    if (this.holding || link.holding) {
      link.held.push(chunk);
      return;
    }
    if (link.raw) {
      if (!link.doomed) link.server.write(chunk);
      return;
    }
    link.pending = link.pending.length === 0 ? chunk : Buffer.concat([link.pending, chunk]);
    const out: Buffer[] = [];
    let offset = 0;
    try {
      for (
        let frame = readCommandFrame(link.pending, offset);
        frame;
        frame = readCommandFrame(link.pending, offset)
      ) {
        const bytes = link.pending.subarray(offset, frame.end);
        const args = frame.args.map((arg) => arg.toString());
        const from = this.holdFromNext;
        if (from?.predicate(args)) {
          // This command and the rest of the connection's bytes wait for release() (logged then).
          this.holdFromNext = undefined;
          link.holding = true;
          link.held.push(Buffer.from(link.pending.subarray(offset)));
          offset = link.pending.length;
          from.resolve({
            seq: this.commands.length,
            conn: link.index,
            args,
            forwarded: false,
            at: Date.now(),
          });
          break;
        }
        offset = frame.end;
        if (this.route(link, args)) out.push(bytes);
      }
    } catch (err) {
      if (!(err instanceof FramingError)) throw err;
      link.raw = true;
      if (!link.doomed) out.push(link.pending.subarray(offset));
      offset = link.pending.length;
    }
    link.pending = link.pending.subarray(offset);
    if (out.length > 0 && !link.server.destroyed) link.server.write(Buffer.concat(out));
  }

  /** Logs one command and decides whether it is forwarded. */
  private route(link: Link, args: string[]): boolean {
    const command: ProxyCommand = {
      seq: this.commands.length,
      conn: link.index,
      args,
      forwarded: false,
      at: Date.now(),
    };
    this.commands.push(command);
    if (link.doomed) return false;
    const lose = this.loseReplies.findIndex((l) => l.predicate(args));
    if (lose !== -1 && !link.deaf) {
      const [l] = this.loseReplies.splice(lose, 1);
      const deaf: Buffer[] = [];
      link.deaf = deaf;
      command.forwarded = true;
      if (l) {
        this.later(l.cutAfterMs, () => {
          this.drop(link);
          l.resolve({ command, dropped: Buffer.concat(deaf) });
        });
      }
      return true;
    }
    const i = this.swallows.findIndex((s) => s.predicate(args));
    if (i === -1) {
      command.forwarded = true;
      return true;
    }
    const [swallow] = this.swallows.splice(i, 1);
    link.doomed = true;
    if (swallow) {
      this.later(swallow.cutAfterMs, () => {
        this.drop(link);
        swallow.resolve(command);
      });
    }
    return false;
  }
}

/** Starts a fault proxy on a free 127.0.0.1 port in front of `targetHost:targetPort`. */
export function startProxy(opts: ProxyOptions): Promise<FaultProxy> {
  const server = net.createServer();
  const proxy = new FaultProxyImpl(server, opts.targetPort, opts.targetHost ?? HOST);
  return new Promise<FaultProxy>((resolve, reject) => {
    server.once("error", (err) =>
      reject(new Error(`fault proxy could not listen on ${HOST}: ${err.message}`)),
    );
    server.listen(0, HOST, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error("fault proxy: could not read its listening port"));
        return;
      }
      proxy.port = address.port;
      server.unref();
      resolve(proxy);
    });
  });
}

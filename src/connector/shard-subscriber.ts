/**
 * A shard-channel subscriber on a raw socket of its own: `SSUBSCRIBE <channel>` on the node that
 * owns the channel's slot, after that socket's boot commands and fence. It follows a `MOVED`
 * answer to the owner it names, and when the subscription ends — the server's own `sunsubscribe`
 * (the slot moved away), the connection dropping (the primary failed) — it asks where the slot
 * lives now, subscribes there again, and says so (`onResubscribed`: a message may have been
 * missed). A refusal no retry can fix (a fence refusal on the new node, refused credentials,
 * `NOPERM`) stops it and is handed to `onFatal`.
 */
import type * as net from "node:net";
import { AuthError, ConnectionError, EchoMQError, ServerError, VersionFenceError } from "../errors.js";
import { encodeCommand, type RawSession, type Reply } from "../resp.js";
import type { ShardHandlers, Subscription } from "./transport.js";

/**
 * The one-line switch between shard channels and classic ones. `true`: `SSUBSCRIBE`, for
 * executors that publish the wake with `SPUBLISH` (docs/cluster.md, "Wake and subscriptions");
 * `false`: `SUBSCRIBE`, for executors that still `PUBLISH` (a classic message reaches every node
 * of a cluster, so this works there too).
 */
export const SHARD_CHANNELS: boolean = true;
const SUBSCRIBE = SHARD_CHANNELS ? "SSUBSCRIBE" : "SUBSCRIBE";
const UNSUBSCRIBE = SHARD_CHANNELS ? "SUNSUBSCRIBE" : "UNSUBSCRIBE";
const SUBSCRIBED = SHARD_CHANNELS ? "ssubscribe" : "subscribe";
const MESSAGE = SHARD_CHANNELS ? "smessage" : "message";
/** A subscription the server ended itself (on a shard channel: its slot left the node). */
const ENDED = SHARD_CHANNELS ? "sunsubscribe" : "unsubscribe";

interface ShardTarget {
  host: string;
  port: number;
}

interface ShardSocket {
  session: RawSession;
  socket: net.Socket;
}

interface ShardSubscriberSetup {
  channel: string;
  /** The node that owns the channel's slot, as far as the caller knows (a `MOVED` is followed). */
  locate(): ShardTarget;
  /** The sockets' client name (`CLIENT SETNAME` at boot), until `rename` gives another. */
  name: string | undefined;
  /**
   * Dials, boots and fences a socket to `target` (typed refusals; transient errors as they are),
   * named `name`. `signal` aborts when the subscriber closes: a socket still booting is destroyed.
   */
  open(target: ShardTarget, signal: AbortSignal, name: string | undefined): Promise<ShardSocket>;
  /** The address to dial for a node address a `MOVED` names (`host:port`). */
  dialOf(announced: string): ShardTarget;
  /** The slot map may have changed: read it again (nothing to do on one node). */
  topologyChanged(): void;
  /** Bound for the `SSUBSCRIBE` reply (the socket's boot and fence have their own). */
  timeoutMs: number;
  handlers: ShardHandlers;
}

const MAX_REDIRECTS = 16;

/** A connector's `openSession()` that `signal` aborts (the booting socket destroyed). */
export function openAbortable(
  connector: { openSession(): Promise<ShardSocket>; disconnect(): void },
  signal: AbortSignal,
): Promise<ShardSocket> {
  const abort = () => connector.disconnect();
  signal.addEventListener("abort", abort, { once: true });
  return connector.openSession().finally(() => signal.removeEventListener("abort", abort));
}

/** Refusals no retry can fix (and a worker stops on): the node's role, the credentials, the channel's grant. */
function isFatalRefusal(err: unknown): boolean {
  if (err instanceof VersionFenceError || err instanceof AuthError) return true;
  return err instanceof ServerError && /^(NOPERM|NOAUTH|WRONGPASS)\b/.test(err.reply);
}

function bulkText(reply: Reply | undefined): string | undefined {
  return reply?.t === "bulk" ? reply.v.toString() : undefined;
}

export class ShardSubscriber implements Subscription {
  private current: ShardSocket | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly closing = new AbortController();
  private name: string | undefined;
  /** Renames in flight on the current socket: each ends its subscription once and opens it again. */
  private renaming = 0;

  constructor(private readonly setup: ShardSubscriberSetup) {
    this.name = setup.name;
  }

  rename(name: string): void {
    if (name === this.name) return;
    this.name = name;
    const conn = this.current;
    if (!conn) return; // the next socket boots with it
    this.renaming += 1;
    const { channel } = this.setup;
    conn.session.write(
      Buffer.concat([
        encodeCommand([UNSUBSCRIBE, channel]),
        encodeCommand(["CLIENT", "SETNAME", name]),
        encodeCommand([SUBSCRIBE, channel]),
      ]),
    );
  }

  ping(): void {
    this.current?.session.write(encodeCommand(["PING"]));
  }

  /**
   * The first subscription. Rejects when it fails (the caller decides whether to try again): a
   * typed refusal as it is, anything else as a `ConnectionError` naming the channel and node.
   */
  async start(): Promise<this> {
    try {
      await this.subscribe();
    } catch (err) {
      if (err instanceof EchoMQError) throw err;
      const { host, port } = this.setup.locate();
      throw new ConnectionError(
        `cannot subscribe to ${this.setup.channel} at ${host}:${port}: ${(err as Error).message}`,
        err,
      );
    }
    return this;
  }

  close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    clearTimeout(this.retry);
    this.current?.socket.destroy();
    this.current = undefined;
    return Promise.resolve();
  }

  /** One subscription attempt, following `MOVED` to the owner it names. */
  private async subscribe(): Promise<void> {
    let target = this.setup.locate();
    for (let redirects = 0; ; redirects++) {
      const conn = await this.setup.open(target, this.closing.signal, this.name);
      if (this.closed) {
        conn.socket.destroy();
        return;
      }
      const reply = await this.ask(conn);
      if (this.closed) {
        conn.socket.destroy();
        return;
      }
      if (reply.t !== "error") {
        this.attach(conn);
        return;
      }
      conn.socket.destroy();
      const moved = /^MOVED \d+ (\S+)$/.exec(reply.v);
      if (!moved || redirects >= MAX_REDIRECTS) throw new ServerError(reply.v);
      this.setup.topologyChanged();
      target = this.setup.dialOf(moved[1]!);
    }
  }

  /** `SSUBSCRIBE <channel>`, bounded: a server that does not answer loses the socket. */
  private async ask(conn: ShardSocket): Promise<Reply> {
    const timer = setTimeout(
      () => conn.socket.destroy(new Error(`${SUBSCRIBE} got no reply within ${this.setup.timeoutMs} ms`)),
      this.setup.timeoutMs,
    );
    try {
      const [reply] = await conn.session.call([[SUBSCRIBE, this.setup.channel]]);
      return reply!;
    } catch (err) {
      conn.socket.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Takes the socket's pushes. A rename's own end of the subscription is expected (and its
   * `SSUBSCRIBE` closes the rename); any error reply — a refused name, a `MOVED` for the
   * subscription asked again — drops the socket, and it subscribes again where the slot lives.
   */
  private attach(conn: ShardSocket): void {
    this.current = conn;
    this.renaming = 0;
    conn.session.onPush = (reply) => {
      if (reply.t === "error") {
        conn.socket.destroy();
        return;
      }
      if (reply.t !== "array") return;
      const kind = bulkText(reply.v[0]);
      if (kind === MESSAGE) this.setup.handlers.onMessage(bulkText(reply.v[2]) ?? "");
      else if (kind === SUBSCRIBED && this.renaming > 0) this.renaming -= 1;
      else if (kind === ENDED && this.renaming === 0) conn.socket.destroy(); // the slot moved away: subscribe where it is now
    };
    conn.socket.once("close", () => this.lost(conn));
  }

  private lost(conn: ShardSocket): void {
    if (this.current !== conn || this.closed) return;
    this.current = undefined;
    this.setup.topologyChanged();
    this.again(0);
  }

  /** Subscribes again: at once, then after 50 ms doubling to 2 s while it fails. */
  private again(failures: number): void {
    const delay = failures === 0 ? 0 : Math.min(50 * 2 ** (failures - 1), 2000);
    this.retry = setTimeout(() => {
      this.subscribe().then(
        () => {
          if (!this.closed) this.setup.handlers.onResubscribed();
        },
        (err: unknown) => {
          if (this.closed) return;
          if (!isFatalRefusal(err)) return this.again(failures + 1);
          this.closed = true;
          this.setup.handlers.onFatal(err as Error);
        },
      );
    }, delay);
  }
}
